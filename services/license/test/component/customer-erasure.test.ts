import { CreateLicenseRequest, ValidateLicenseRequest } from '@licensing/proto';
import { newId } from '@licensing/runtime';
import type { Connection } from 'mongoose';
import type { EventLog } from '../../../../test/support/events';
import { eventually } from '../../../../test/support/eventually';
import { type RunningLicense, useLicenseService } from './running-license';

// EraseCustomer on the licence service alone (as the gateway's DELETE /api/v1/customers/{email} calls it:
// gateway/test/component/customer-erasure-routes.test.ts), against real FerretDB and NATS: the e-mail
// leaves its licences, activations (a machine named after it), licence batches' items and erasure
// records, the keys keep validating, and the events say so without the e-mail. Real time (no clock
// moved): the outbox clears published events from their documents after a few seconds.

jest.setTimeout(120_000);

let svc: RunningLicense;
let events: EventLog;
let db: Connection;

useLicenseService(async (started, log) => {
  svc = started;
  events = log;
  db = await svc.db();
});

/** A new vendor with one product. */
function vendor() {
  const accountId = newId('acct');
  const product = svc.product(accountId).id;
  return { accountId, product, issue: (email: string) => svc.issue(accountId, product, email) };
}

const OUTBOX_WAIT = { timeoutMs: 30_000, intervalMs: 100 };

describe('erasing a customer', () => {
  it('leaves no trace of the e-mail in licences and activations; the key validates; events say so; a repeat changes nothing', async () => {
    const v = vendor();
    const key = await v.issue('Erin.Smith@Example.com');
    const keptKey = await v.issue('keep@example.com');
    // Other customers whose addresses hold the erased one: theirs stay whole.
    for (const email of ['xerin.smith@example.com', 'erin.smith@example.com.au']) await v.issue(email);
    await svc.api.activate({
      account_id: v.accountId,
      key,
      fingerprint: 'erin-1',
      name: "erin.smith@example.com's MacBook",
    });
    const everything = async () =>
      JSON.stringify([
        await db.collection('licenses').find({ account_id: v.accountId }).toArray(),
        await db.collection('activations').find({ account_id: v.accountId }).toArray(),
        await db.collection('customer_erasures').find({ account_id: v.accountId }).toArray(),
      ]);
    // The address itself, not inside the longer ones.
    const erinAsAWhole = /(?<![\w.+-])erin\.smith@example\.com(?![\w-]|\.\w)/i;
    expect(await everything()).toMatch(erinAsAWhole);
    const req = { account_id: v.accountId, email: 'erin.smith@EXAMPLE.com', placeholder: 'erased-7f3a@erased.invalid' };
    expect(await svc.api.eraseCustomer(req)).toEqual({ erased: 1 });

    await events.waitFor(
      (e) =>
        e.type === 'license.updated' &&
        (e.data as { license: { key: string } }).license.key === key &&
        (e.data as { license: { customer_email: string } }).license.customer_email === 'erased-7f3a@erased.invalid',
    );
    const erased = await events.waitFor((e) => e.type === 'customer.erased' && e.account_id === v.accountId);
    expect(erased.data).toEqual({ placeholder: 'erased-7f3a@erased.invalid', licenses: 1 });
    expect(JSON.stringify(erased)).not.toMatch(/erin/i);

    // The outbox keeps a published event on its document a few seconds before clearing it.
    await eventually(async () => expect(await everything()).not.toMatch(erinAsAWhole), OUTBOX_WAIT);
    expect(await everything()).toContain('erased-7f3a@erased.invalid');
    expect(await everything()).toContain("erased-7f3a@erased.invalid's MacBook");
    expect(await everything()).toContain('keep@example.com');
    for (const email of ['xerin.smith@example.com', 'erin.smith@example.com.au'])
      expect(await everything()).toContain(email);

    const valid = await svc.api.validateLicense(
      ValidateLicenseRequest.fromPartial({ account_id: v.accountId, key, fingerprint: 'erin-1', key_scope: 'full' }),
    );
    expect(valid.valid).toBe(true);
    expect((await svc.api.getLicense({ account_id: v.accountId, key })).customer_email).toBe(
      'erased-7f3a@erased.invalid',
    );
    expect((await svc.api.getLicense({ account_id: v.accountId, key: keptKey })).customer_email).toBe(
      'keep@example.com',
    );

    const snapshot = await everything();
    expect(await svc.api.eraseCustomer(req)).toEqual({ erased: 0 });
    await events.waitFor(
      (e) =>
        e.type === 'customer.erased' && e.account_id === v.accountId && (e.data as { licenses: number }).licenses === 0,
    );
    // Nothing changed but the second call's own erasure record.
    const strip = (s: string) => {
      const [licenses, activations] = JSON.parse(s) as unknown[][];
      return [licenses, activations];
    };
    await eventually(async () => expect(strip(await everything())).toEqual(strip(snapshot)), OUTBOX_WAIT);
  });

  it("takes the e-mail off licence batches' items", async () => {
    const v = vendor();
    const customer = 'Late.Buyer@Example.com';
    // The licence of the customer's subscription (issued for the checkout service).
    await svc.api.createLicense(
      CreateLicenseRequest.fromPartial({ account_id: v.accountId, product_id: v.product, customer_email: customer }),
    );
    // A batch whose items ask for the licence mail.
    const batch = await svc.api.createLicenseBatch({
      account_id: v.accountId,
      product_id: v.product,
      licenses: [
        { customer_email: customer, send_email: true, metadata: {}, entitlements: [] },
        { customer_email: 'batch.neighbour@example.com', send_email: true, metadata: {}, entitlements: [] },
      ],
      idempotency_key: '',
    });
    await eventually(
      async () =>
        expect((await svc.api.getLicenseBatch({ account_id: v.accountId, id: batch.id })).status).toBe('done'),
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    const stored = async () =>
      JSON.stringify(await db.collection('license_batches').find({ account_id: v.accountId }).toArray());
    expect(await stored()).toMatch(/late\.buyer@example\.com/i);

    const req = { account_id: v.accountId, email: customer, placeholder: 'erased-5e1f@erased.invalid' };
    // The licences (the subscription's and the batch's) and the batch.
    expect(await svc.api.eraseCustomer(req)).toEqual({ erased: 3 });
    // The outbox keeps a published event on its document a few seconds before clearing it.
    await eventually(async () => expect(await stored()).not.toMatch(/late\.buyer@example\.com/i), OUTBOX_WAIT);
    expect(await stored()).toContain('batch.neighbour@example.com');
    // What the notification service reads of the batch names the placeholder, so it mails nobody erased.
    const read = await svc.api.getLicenseBatch({ account_id: v.accountId, id: batch.id });
    expect(read.results.map((r) => r.customer_email).sort()).toEqual([
      'batch.neighbour@example.com',
      'erased-5e1f@erased.invalid',
    ]);
    expect(await svc.api.eraseCustomer(req)).toEqual({ erased: 0 });
  });
});
