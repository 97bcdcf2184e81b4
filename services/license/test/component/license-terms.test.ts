import { type AppError, newId } from '@licensing/runtime';
import {
  CreateLicenseRequest,
  ValidateLicenseRequest,
  type DomainEvent,
  type LicenseOverrides,
  type LicensePolicy,
} from '@licensing/proto';
import type { EventLog } from '../../../../test/support/events';
import { eventually } from '../../../../test/support/eventually';
import { type RunningLicense, useLicenseService } from './running-license';

// Per-licence terms (expires_at, max_activations, lease_seconds over the product's policy), as the
// licence service keeps them, called over gRPC as the gateway calls it (real FerretDB and NATS; time
// moves by the service's clock): issued and changed, shown as the effective policy and the overrides,
// kept by a renewal, judged by validation and activation, a lowered limit refused or brought within by
// freeing the longest-unseen machines, and bad input refused with nothing written. The rules alone:
// services/license/test/unit/license-terms.test.ts; the REST shape:
// gateway/test/component/license-terms-routes.test.ts.

let svc: RunningLicense;
let events: EventLog;
const accountId = newId('acct');
const DAY = 86_400_000;

useLicenseService((started, log) => {
  svc = started;
  events = log;
});

const terms = (t: { max?: number | null; lease?: number | null; expires?: string }): LicenseOverrides => ({
  max_activations: t.max === undefined ? undefined : { value: t.max ?? undefined },
  lease_seconds: t.lease === undefined ? undefined : { value: t.lease ?? undefined },
  expires_at: t.expires,
});
const productWith = (policy: Partial<LicensePolicy>) => svc.product(accountId, policy);
const create = (productId: string, overrides?: LicenseOverrides) =>
  svc.api.createLicense(
    CreateLicenseRequest.fromPartial({
      account_id: accountId,
      product_id: productId,
      customer_email: 't@example.com',
      overrides,
    }),
  );
const update = (key: string, overrides: LicenseOverrides, deactivate_excess = false) =>
  svc.api.updateLicense({
    account_id: accountId,
    key,
    metadata: {},
    set_entitlements: false,
    entitlements: [],
    overrides,
    deactivate_excess,
  });
const get = (key: string) => svc.api.getLicense({ account_id: accountId, key });
const activate = (key: string, fingerprint: string) =>
  svc.api.activate({ account_id: accountId, key, fingerprint, name: '' });
const listed = async (key: string) =>
  (await svc.api.listActivations({ account_id: accountId, key, page: { limit: 100, starting_after: '' } })).data;
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (err: AppError) => err,
  );
const deactivatedFor = (key: string) => (e: DomainEvent) =>
  e.type === 'license.deactivated' && (e.data as { license: { key: string } }).license.key === key;

describe('a licence issued with terms of its own', () => {
  it('holds them as its effective policy, shows those that differ, and validation and activation follow them', async () => {
    const product = productWith({ max_activations: 2, duration_days: 30, require_activation: true });
    const expires = new Date(svc.clock.now().getTime() + 90 * DAY).toISOString();
    const issued = await create(product.id, terms({ max: 3, lease: 120, expires }));
    expect(issued.policy).toMatchObject({ max_activations: 3, lease_seconds: 120, duration_days: 30 });
    expect(issued.expires_at).toBe(expires);
    expect(issued.overrides).toEqual(terms({ max: 3, lease: 120, expires }));
    expect((await get(issued.key)).overrides).toEqual(issued.overrides);
    const page = await svc.api.listLicenses({
      account_id: accountId,
      product_id: product.id,
      customer_email: '',
      status: '',
      page: undefined,
    });
    expect(page.data.map((l) => [l.policy?.max_activations, l.overrides?.max_activations])).toEqual([
      [3, { value: 3 }],
    ]);
    // Three machines where the product allows two, each with a lease (lease_seconds of its own).
    for (const machine of ['m1', 'm2', 'm3'])
      expect((await activate(issued.key, machine)).activation!.lease_expires_at).not.toBe('');
    expect((await refusal(activate(issued.key, 'm4'))).code).toBe('conflict');
    const answer = await svc.api.validateLicense(
      ValidateLicenseRequest.fromPartial({
        account_id: accountId,
        key: issued.key,
        fingerprint: 'm4',
        key_scope: 'full',
        want_facts: true,
      }),
    );
    expect([answer.code, answer.detail]).toEqual([
      'activation_limit_reached',
      expect.stringContaining('of 3 machines'),
    ]);
    expect(answer.license?.overrides).toEqual(issued.overrides);
    expect(answer.facts?.license?.policy?.max_activations).toBe(3);
  });

  it('records no override equal to the product policy, and a null is a value of its own', async () => {
    const product = productWith({ max_activations: 2 });
    const same = await create(product.id, terms({ max: 2 }));
    expect(same.overrides).toEqual(terms({}));
    const unlimited = await create(product.id, terms({ max: null }));
    expect(unlimited.policy?.max_activations).toBeUndefined();
    expect(unlimited.overrides).toEqual(terms({ max: null }));
  });

  it.each([
    ['an expiry in the past', terms({ expires: '2000-01-01T00:00:00Z' }), 'expires_at'],
    ['an expiry that is not a time', terms({ expires: 'next year' }), 'expires_at'],
    ['max_activations 0', terms({ max: 0 }), 'max_activations'],
    ['max_activations past its range', terms({ max: 10_001 }), 'max_activations'],
    ['lease_seconds under its range', terms({ lease: 29 }), 'lease_seconds'],
  ])('refuses %s (400 naming the field), issuing nothing', async (_what, overrides, field) => {
    const product = productWith({});
    const err = await refusal(create(product.id, overrides));
    expect([err.code, err.fieldErrors.map((f) => f.field)]).toEqual(['invalid_request', [field]]);
    const page = await svc.api.listLicenses({
      account_id: accountId,
      product_id: product.id,
      customer_email: '',
      status: '',
      page: undefined,
    });
    expect(page.data).toEqual([]);
  });
});

describe('terms changed on an existing licence', () => {
  it('takes effect at once (activation and validation answers of this instance), and set back to the policy is no override', async () => {
    const product = productWith({ max_activations: 1, require_activation: true });
    const key = (await create(product.id)).key;
    await activate(key, 'a');
    const full = await svc.api.validateLicense(
      ValidateLicenseRequest.fromPartial({ account_id: accountId, key, fingerprint: 'b', key_scope: 'full' }),
    );
    expect(full.code).toBe('activation_limit_reached');
    const raised = await update(key, terms({ max: 2 }));
    expect([raised.policy?.max_activations, raised.overrides]).toEqual([2, terms({ max: 2 })]);
    await events.waitFor(
      (e) => e.type === 'license.updated' && (e.data as { license: { key: string } }).license.key === key,
    );
    // This instance's memory of the licence was evicted by the change: the next answer follows it.
    const now = await svc.api.validateLicense(
      ValidateLicenseRequest.fromPartial({ account_id: accountId, key, fingerprint: 'b', key_scope: 'full' }),
    );
    expect(now.code).toBe('not_activated');
    expect((await activate(key, 'b')).created).toBe(true);
    const back = await update(key, terms({ max: 1 }), true);
    expect([back.policy?.max_activations, back.overrides]).toEqual([1, terms({})]);
  });

  it('lowering max_activations below the machines in use is a conflict without deactivate_excess, nothing written', async () => {
    const product = productWith({ max_activations: 3 });
    const key = (await create(product.id)).key;
    for (const machine of ['a', 'b', 'c']) await activate(key, machine);
    const err = await refusal(update(key, terms({ max: 2 })));
    expect(err.code).toBe('conflict');
    expect(err.message).toMatch(/deactivate_excess/);
    expect((await get(key)).policy?.max_activations).toBe(3);
    expect(await listed(key)).toHaveLength(3);
  });

  it('with deactivate_excess frees the longest-unseen machines (limit_lowered) and holds the new limit', async () => {
    const product = productWith({ max_activations: 3, lease_seconds: 600 });
    const key = (await create(product.id)).key;
    const ids: string[] = [];
    for (const machine of ['a', 'b', 'c']) {
      ids.push((await activate(key, machine)).activation!.id);
      svc.clock.advance(1000);
    }
    // The machine kept is one that took a slot the new limit leaves out (two of the three did).
    const activations = (await svc.db()).collection<{ _id: string; slot_key: string }>('activations');
    const slotOf = async (id: string) => (await activations.findOne({ _id: id }))?.slot_key;
    const kept = (await Promise.all(ids.map(async (id) => [id, await slotOf(id)] as const))).find(
      ([, s]) => s !== '1',
    )![0];
    const [neverSeen, seenFirst] = ids.filter((id) => id !== kept);
    // Seen since: seenFirst, then kept; neverSeen not since it was activated.
    svc.clock.advance(60_000);
    await svc.api.heartbeat({ account_id: accountId, key, activation_id: seenFirst });
    svc.clock.advance(60_000);
    await svc.api.heartbeat({ account_id: accountId, key, activation_id: kept });
    const lowered = await update(key, terms({ max: 1 }), true);
    expect([lowered.policy?.max_activations, lowered.overrides]).toEqual([1, terms({ max: 1 })]);
    expect((await listed(key)).map((a) => a.id)).toEqual([kept]);
    const freed = await eventually(() => {
      const seen = events.all().filter(deactivatedFor(key));
      expect(seen).toHaveLength(2);
      return seen;
    });
    const reasons = freed.map((e) => [
      (e.data as { activation: { id: string } }).activation.id,
      (e.data as { reason: string }).reason,
    ]);
    expect(reasons.sort()).toEqual(
      [
        [neverSeen, 'limit_lowered'],
        [seenFirst, 'limit_lowered'],
      ].sort(),
    );
    // The machine kept moved into the one slot left, so no other machine gets in.
    expect(await slotOf(kept)).toBe('1');
    expect((await refusal(activate(key, 'd'))).code).toBe('conflict');
  });

  it('lease_seconds on a node-locked policy makes the licence floating, and null makes it node-locked again', async () => {
    const product = productWith({ max_activations: 2 });
    const key = (await create(product.id)).key;
    expect((await activate(key, 'fixed')).activation!.lease_expires_at).toBe('');
    await update(key, terms({ lease: 60 }));
    expect((await activate(key, 'floating')).activation!.lease_expires_at).not.toBe('');
    const back = await update(key, terms({ lease: null }));
    expect([back.policy?.lease_seconds, back.overrides]).toEqual([undefined, terms({})]);
  });

  it('a past expiry may be set (the licence expires at once); bad input writes nothing', async () => {
    const product = productWith({ duration_days: 30 });
    const key = (await create(product.id)).key;
    const before = await get(key);
    for (const bad of [terms({ expires: 'soon' }), terms({ max: 0 }), terms({ lease: 86_401 })])
      expect((await refusal(update(key, bad))).code).toBe('invalid_request');
    expect((await get(key)).expires_at).toBe(before.expires_at);
    const past = new Date(svc.clock.now().getTime() - DAY).toISOString();
    const expired = await update(key, terms({ expires: past }));
    expect([expired.status, expired.expires_at, expired.overrides?.expires_at]).toEqual(['expired', past, past]);
  });
});

describe('a renewal', () => {
  it("keeps the licence's own numbers over the product's new policy, and replaces its own expiry", async () => {
    const product = productWith({ max_activations: 2, duration_days: 30 });
    const expires = new Date(svc.clock.now().getTime() + 10 * DAY).toISOString();
    const key = (await create(product.id, terms({ max: 5, lease: 300, expires }))).key;
    await svc.updateProduct(product, { max_activations: 4, duration_days: 60 });
    const renewed = await svc.api.transitionLicense({ account_id: accountId, key, action: 'renew' });
    expect(renewed.policy).toMatchObject({ max_activations: 5, lease_seconds: 300, duration_days: 60 });
    expect(renewed.overrides).toEqual(terms({ max: 5, lease: 300 }));
    expect(renewed.expires_at).toBe(new Date(Date.parse(expires) + 60 * DAY).toISOString());
  });
});
