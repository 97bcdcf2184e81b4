import { newId, type AppError } from '@licensing/runtime';
import type { EventLog } from '../../../../test/support/events';
import { eventually } from '../../../../test/support/eventually';
import { type RunningLicense, useLicenseService } from './running-license';

// What the customer portal asks of the licence service (over gRPC, with the web component's credential,
// as the portal calls it), against real FerretDB and NATS: a customer freeing their own machines within the policy's
// customer_deactivations_per_30_days (time moved by the service's clock), and when a machine was last
// seen (from the validations the gateways report in batches, or a heartbeat).

const DAY_MS = 86_400_000;
let svc: RunningLicense;
let events: EventLog;

useLicenseService((started, log) => {
  svc = started;
  events = log;
});

/** A new vendor with one product (10 machines per licence, and the policy given). */
function vendor(policy: Record<string, unknown> = {}) {
  const accountId = newId('acct');
  const product = svc.product(accountId, policy);
  return {
    accountId,
    issue: (email: string) => svc.issue(accountId, product.id, email),
    machine: (key: string, fingerprint: string) => svc.activate(accountId, key, fingerprint),
    machines: async (key: string) =>
      (await svc.api.listActivations({ account_id: accountId, key, page: { limit: 100, starting_after: '' } })).data,
  };
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (err: AppError) => err,
  );

describe('a customer frees their own machines', () => {
  it('publishes license.deactivated with reason customer; the 4th within 30 days is rate_limited with Retry-After, then allowed', async () => {
    const v = vendor();
    const key = await v.issue('Ann.Buyer@Example.com');
    const ids: string[] = [];
    for (const fp of ['m1', 'm2', 'm3', 'm4']) ids.push(await v.machine(key, fp));
    const free = (activation_id: string) =>
      svc.webApi.deactivateForCustomer({
        account_id: v.accountId,
        key,
        activation_id,
        customer_email: 'ann.buyer@example.com',
      });

    const first = svc.clock.now();
    const freed = await free(ids[0]);
    expect(freed).toMatchObject({ id: ids[0], fingerprint: 'm1' });
    const event = await events.waitFor(
      (e) => e.type === 'license.deactivated' && (e.data as { activation: { id: string } }).activation.id === ids[0],
    );
    expect((event.data as { reason: string }).reason).toBe('customer');
    expect((await v.machines(key)).map((a) => a.id)).not.toContain(ids[0]);

    svc.clock.advance(DAY_MS);
    await free(ids[1]);
    svc.clock.advance(DAY_MS);
    await free(ids[2]);
    svc.clock.advance(DAY_MS);
    const err = await refusal(free(ids[3]));
    expect(err.code).toBe('rate_limited');
    const expected = Math.ceil((first.getTime() + 30 * DAY_MS - svc.clock.now().getTime()) / 1000);
    expect(Math.abs(err.retryAfterS! - expected)).toBeLessThanOrEqual(2);
    expect(err.message).toMatch(/you can free another machine on \d+ [A-Z][a-z]+ \d{4}, \d\d:\d\d UTC/);
    expect((await v.machines(key)).map((a) => a.id)).toContain(ids[3]);

    svc.clock.advance((err.retryAfterS! + 1) * 1000);
    await expect(free(ids[3])).resolves.toMatchObject({ id: ids[3] });
  });

  it('a policy of 0 is a conflict that points to the vendor, and frees nothing', async () => {
    const v = vendor({ customer_deactivations_per_30_days: 0 });
    const key = await v.issue('zero@example.com');
    const id = await v.machine(key, 'z1');
    const err = await refusal(
      svc.webApi.deactivateForCustomer({
        account_id: v.accountId,
        key,
        activation_id: id,
        customer_email: 'zero@example.com',
      }),
    );
    expect([err.code, err.message]).toEqual([
      'conflict',
      'machines of this licence are freed by the vendor only: contact the vendor to free one',
    ]);
    expect((await v.machines(key)).map((a) => a.id)).toEqual([id]);
  });

  it("another customer's licence, another account's, another licence's activation: the same not_found, and nothing changes", async () => {
    const v = vendor();
    const mine = await v.issue('me@example.com');
    const second = await v.issue('me@example.com');
    const theirs = await v.issue('them@example.com');
    const other = vendor();
    const elsewhere = await other.issue('me@example.com');
    const a = await v.machine(mine, 'a');
    const b = await v.machine(second, 'b');
    const t = await v.machine(theirs, 't');
    const e = await other.machine(elsewhere, 'e');
    const attempts = [
      { account_id: v.accountId, key: theirs, activation_id: t, customer_email: 'me@example.com' },
      { account_id: v.accountId, key: mine, activation_id: b, customer_email: 'me@example.com' },
      { account_id: v.accountId, key: elsewhere, activation_id: e, customer_email: 'me@example.com' },
      { account_id: v.accountId, key: mine, activation_id: a, customer_email: 'them@example.com' },
      { account_id: other.accountId, key: mine, activation_id: a, customer_email: 'me@example.com' },
    ];
    for (const req of attempts) {
      const err = await refusal(svc.webApi.deactivateForCustomer(req));
      expect([err.code, err.message]).toEqual(['not_found', 'licence not found']);
    }
    expect((await v.machines(mine)).map((x) => x.id)).toEqual([a]);
    expect((await v.machines(second)).map((x) => x.id)).toEqual([b]);
    expect((await v.machines(theirs)).map((x) => x.id)).toEqual([t]);
    expect((await other.machines(elsewhere)).map((x) => x.id)).toEqual([e]);
  });
});

describe('when a machine was last seen', () => {
  /** What a gateway's batched flush reports of one validation naming `fingerprint`. */
  async function validated(accountId: string, key: string, fingerprint: string): Promise<void> {
    const licence = await svc.api.getLicense({ account_id: accountId, key });
    const at = svc.clock.now().toISOString();
    await svc.api.recordValidations({
      tallies: [],
      last_validated: [{ account_id: accountId, license_id: licence.id, at }],
      seen: [
        {
          account_id: accountId,
          license_id: licence.id,
          hour: `${at.slice(0, 13)}:00:00.000Z`,
          code: 'valid',
          fingerprint,
          count: 1,
          last_at: at,
        },
      ],
    });
  }

  it('an activation shows when it was last seen: its last validation naming it, from the batched flush', async () => {
    const v = vendor();
    const key = await v.issue('seen@example.com');
    await v.machine(key, 'seen-1');
    expect((await v.machines(key))[0].last_seen_at).toBe('');
    const before = svc.clock.now().getTime();
    await validated(v.accountId, key, 'seen-1');
    const seen = await eventually(async () => {
      const at = (await v.machines(key))[0].last_seen_at;
      expect(at).not.toBe('');
      return Date.parse(at);
    });
    expect(seen).toBeGreaterThanOrEqual(before - 1000);
  });

  it('the flush that stores last_seen_at never writes to the activation (a deactivation made meanwhile stays)', async () => {
    // FerretDB's updates read, change and write back the whole document: a background write to the
    // activation could put back a deactivation the vendor made while it ran (CI once saw a second
    // deactivation succeed). The sighting lives in a document of its own.
    const v = vendor();
    const key = await v.issue('apart@example.com');
    const id = await v.machine(key, 'apart-1');
    await validated(v.accountId, key, 'apart-1');
    await eventually(async () => expect((await v.machines(key))[0].last_seen_at).not.toBe(''));
    const store = await svc.db();
    const activation = await store.collection('activations').findOne({ _id: id as never });
    expect(activation?.last_seen_at ?? null).toBeNull();
    const sightings = await store.collection('machine_sightings').find({ fingerprint: 'apart-1' }).toArray();
    expect(sightings).toHaveLength(1);
    const deactivate = () =>
      svc.api.deactivate({ account_id: v.accountId, key, activation_id: id, key_scope: 'full', fingerprint: '' });
    await expect(deactivate()).resolves.toMatchObject({ id });
    expect((await refusal(deactivate())).code).toBe('not_found');
  });

  it('a heartbeat moves last_seen_at in its own write', async () => {
    const v = vendor({ lease_seconds: 600 });
    const key = await v.issue('beat@example.com');
    const id = await v.machine(key, 'beat-1');
    svc.clock.advance(60_000);
    await svc.api.heartbeat({ account_id: v.accountId, key, activation_id: id });
    const seen = Date.parse((await v.machines(key))[0].last_seen_at);
    expect(Math.abs(seen - svc.clock.now().getTime())).toBeLessThan(5000);
  });
});
