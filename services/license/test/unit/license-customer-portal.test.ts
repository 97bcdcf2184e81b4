import type { AppError } from '@licensing/runtime';
import { activate, deactivate } from '../../src/use-cases/activations';
import { deactivateForCustomer } from '../../src/use-cases/customer-portal';
import { eraseCustomer } from '../../src/use-cases/erase-customer';
import { transferErasure } from '../../src/transfer/use-cases/erasure';
import { refusal } from '../../../../test/support/fakes/common';
import { licenseSetup, policy } from '../../../../test/support/fakes/license-deps';
import { FakeBatchEmails } from '../../../../test/support/fakes/license-stores';

async function setup(perMonth?: number) {
  const base = licenseSetup({ policy: policy({ max_activations: 10, customer_deactivations_per_30_days: perMonth }) });
  const batches = new FakeBatchEmails();
  // The export files' part of an erasure runs against FerretDB (services/license/test/component/export-files.test.ts).
  const exports = {
    finishedExports: async () => [],
    deleteChunks: async () => undefined,
    markExportExpired: async () => undefined,
  };
  const s = { ...base, batches, erasing: { ...base.deps, transfer: transferErasure(batches, exports) } };
  const lic = await s.issued();
  const machine = async (fingerprint: string, name = '') =>
    (await activate(s.deps, { account_id: 'acct_A', key: lic.key, fingerprint, name })).activation;
  s.store.events.length = 0;
  const free = (activationId: string, over: Record<string, string> = {}) =>
    deactivateForCustomer(s.deps, {
      account_id: 'acct_A',
      key: lic.key,
      activation_id: activationId,
      customer_email: 'BUYER@example.com',
      ...over,
    });
  return { ...s, lic, machine, free };
}

describe('a customer frees a machine', () => {
  it('through the deactivation path, with license.deactivated reason customer', async () => {
    const { store, outbox, machine, free } = await setup();
    const a = await machine('fp-1');
    store.events.length = 0;
    outbox.flushed.length = 0;
    const done = await free(a._id);
    expect(done).toMatchObject({ _id: a._id, deactivated_reason: 'customer' });
    expect(store.activations.get(a._id)).toMatchObject({ deactivated_reason: 'customer', slot_key: `freed:${a._id}` });
    expect(store.events.map((e) => [e.type, (e.data as { reason?: string }).reason])).toEqual([
      ['license.deactivated', 'customer'],
    ]);
    expect(outbox.flushed).toEqual([{ model: 'Activation', id: a._id }]);
  });

  it('the 4th within 30 days is rate_limited until the oldest leaves the window; then allowed', async () => {
    const { clock, machine, free } = await setup();
    const first = clock.now();
    for (const fp of ['a', 'b', 'c']) {
      await free((await machine(fp))._id);
      clock.advance(3600_000);
    }
    const fourth = await machine('d');
    const err = (await refusal(() => free(fourth._id))) as AppError;
    expect(err.code).toBe('rate_limited');
    const wait = (first.getTime() + 30 * 86_400_000 - clock.now().getTime()) / 1000;
    expect(err.retryAfterS).toBe(wait);
    expect(err.message).toMatch(/you can free another machine on 31 March 2026, 12:00 UTC/);
    clock.advance(wait * 1000);
    await expect(free(fourth._id)).resolves.toMatchObject({ deactivated_reason: 'customer' });
  });

  it('vendor deactivations do not count', async () => {
    const { machine, free, deps, lic } = await setup(1);
    const a = await machine('a');
    await deactivate(deps, 'acct_A', lic.key, a._id);
    await expect(free((await machine('b'))._id)).resolves.toBeTruthy();
  });

  it('0 is a conflict that sends the customer to the vendor', async () => {
    const { machine, free, store } = await setup(0);
    const a = await machine('a');
    const err = await refusal(() => free(a._id));
    expect(err.code).toBe('conflict');
    expect(err.message).toMatch(/vendor/);
    expect(store.activations.get(a._id)?.deactivated_at).toBeNull();
  });

  it('a licence stored before the setting existed allows 3', async () => {
    const { machine, free, store, lic } = await setup();
    delete (store.licenses.get(lic._id)!.policy as Record<string, unknown>).customer_deactivations_per_30_days;
    for (const fp of ['a', 'b', 'c']) await free((await machine(fp))._id);
    expect((await refusal(async () => free((await machine('d'))._id))).code).toBe('rate_limited');
  });

  it.each([
    ['another customer', { customer_email: 'other@example.com' }],
    ['another account', { account_id: 'acct_B' }],
    ['an unknown key', { key: 'NOT-A-KEY' }],
    ['an unknown activation', { activation_id: 'act_01HZZZZZZZZZZZZZZZZZZZZZZZ' }],
  ])('%s: not found, and nothing changes', async (_, over) => {
    const { machine, free, store } = await setup();
    const a = await machine('a');
    store.events.length = 0;
    const err = await refusal(() => free(a._id, over));
    expect([err.code, err.message]).toEqual(['not_found', 'licence not found']);
    expect(store.activations.get(a._id)?.deactivated_at).toBeNull();
    expect(store.events).toEqual([]);
  });

  it("another licence's activation, or a freed one: not found", async () => {
    const s = await setup();
    const other = await s.issued();
    const theirs = (await activate(s.deps, { account_id: 'acct_A', key: other.key, fingerprint: 'x', name: '' }))
      .activation;
    expect((await refusal(() => s.free(theirs._id))).message).toBe('licence not found');
    expect(s.store.activations.get(theirs._id)?.deactivated_at).toBeNull();
    const mine = await s.machine('m');
    await s.free(mine._id);
    expect((await refusal(() => s.free(mine._id))).message).toBe('licence not found');
  });
});

describe('erasing a customer from licences', () => {
  it("takes the e-mail off the customer's licences and their machines' names, one license.updated each, then customer.erased", async () => {
    const s = await setup();
    await s.machine('a', "Buyer@Example.com's laptop");
    // The same e-mail in another account is not this account's customer.
    const other = {
      ...s.lic,
      _id: 'lic_01HZZZZZZZZZZZZZZZZZZZZZZB',
      key: `${s.lic.key.slice(0, -1)}0`,
      account_id: 'acct_B',
    };
    s.store.licenses.set(other._id, structuredClone(other));
    s.store.events.length = 0;
    const n = await eraseCustomer(s.erasing, {
      account_id: 'acct_A',
      email: 'buyer@EXAMPLE.com',
      placeholder: 'erased-1@erased.invalid',
    });
    expect(n).toBe(1);
    expect(s.store.licenses.get(s.lic._id)).toMatchObject({
      customer_email: 'erased-1@erased.invalid',
      customer_email_lc: 'erased-1@erased.invalid',
      key: s.lic.key,
    });
    expect([...s.store.activations.values()].map((a) => a.name)).toEqual(["erased-1@erased.invalid's laptop"]);
    expect(s.store.licenses.get(other._id)?.customer_email).toBe('buyer@example.com');
    expect(s.store.events.map((e) => e.type)).toEqual(['license.updated', 'customer.erased']);
    expect(s.store.events[1].data).toEqual({ placeholder: 'erased-1@erased.invalid', licenses: 1 });
    expect(JSON.stringify(s.store.events)).not.toMatch(/buyer@example\.com/i);
  });

  it("replaces the e-mail in the items of the account's licence batches, older batches too; the event counts licences only", async () => {
    const s = await setup();
    s.batches.add('lbat_1', 'acct_A', ['x@example.com', 'BUYER@example.com', 'buyer@example.com']);
    s.batches.add('lbat_2', 'acct_A', ['Buyer@Example.com'], false); // stored before customer_emails_lc
    s.batches.add('lbat_3', 'acct_A', ['y@example.com']);
    s.batches.add('lbat_4', 'acct_B', ['buyer@example.com']);
    s.store.events.length = 0;
    const req = { account_id: 'acct_A', email: 'Buyer@example.com', placeholder: 'erased-2@erased.invalid' };
    expect(await eraseCustomer(s.erasing, req)).toBe(3); // the licence and two batches
    const emails = (id: string) => s.batches.rows.get(id)!.items.map((i) => i.customer_email);
    expect(emails('lbat_1')).toEqual(['x@example.com', 'erased-2@erased.invalid', 'erased-2@erased.invalid']);
    expect(s.batches.rows.get('lbat_1')!.customer_emails_lc).toEqual(['x@example.com', 'erased-2@erased.invalid']);
    expect(emails('lbat_2')).toEqual(['erased-2@erased.invalid']);
    expect(emails('lbat_3')).toEqual(['y@example.com']);
    expect(emails('lbat_4')).toEqual(['buyer@example.com']);
    // The items keep everything else: their keys, status and send_email.
    expect(s.batches.rows.get('lbat_1')!.items[1]).toMatchObject({
      key: 'KEY-lbat_1-1',
      status: 'issued',
      send_email: true,
    });
    expect(s.store.events.find((e) => e.type === 'customer.erased')!.data).toEqual({
      placeholder: 'erased-2@erased.invalid',
      licenses: 1,
    });
    expect(await eraseCustomer(s.erasing, req)).toBe(0);
  });

  it('a second call changes nothing and still says customer.erased', async () => {
    const s = await setup();
    const req = { account_id: 'acct_A', email: 'buyer@example.com', placeholder: 'erased-1@erased.invalid' };
    await eraseCustomer(s.erasing, req);
    s.store.events.length = 0;
    expect(await eraseCustomer(s.erasing, req)).toBe(0);
    expect(s.store.events.map((e) => [e.type, e.data])).toEqual([
      ['customer.erased', { placeholder: 'erased-1@erased.invalid', licenses: 0 }],
    ]);
  });

  it('refuses a placeholder that is not an address, or holds the e-mail', async () => {
    const s = await setup();
    const erase = (placeholder: string) =>
      refusal(() => eraseCustomer(s.erasing, { account_id: 'acct_A', email: 'buyer@example.com', placeholder }));
    expect((await erase('')).code).toBe('invalid_request');
    expect((await erase('x.buyer@example.com')).code).toBe('invalid_request');
  });
});
