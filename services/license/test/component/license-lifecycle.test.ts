import { AppError, newId } from '@licensing/runtime';
import { ValidateLicenseRequest, type LicensePolicy } from '@licensing/proto';
import type { EventLog } from '../../../../test/support/events';
import { eventually } from '../../../../test/support/eventually';
import { type RunningLicense, useLicenseService } from './running-license';

// A licence's life as the licence service decides it, called over gRPC as the gateway calls it (real
// FerretDB and NATS, the service's clock moved by the test, its product service faked): the policy a
// licence is issued under, suspend / reinstate / revoke / renew and the refusals of the lifecycle
// table, expiry and grace on the clock with one license.expired per licence (two instances sweeping
// included), changes of e-mail and metadata, activations within max_activations, and what another
// account or a validate-scope key sees. The REST face of these calls (statuses, problem bodies, the
// request shapes the gateway refuses first): gateway/test/component/license-routes.test.ts.

const DAY = 86_400_000;
let svc: RunningLicense;
let events: EventLog;
const accountId = newId('acct');

useLicenseService((started, log) => {
  svc = started;
  events = log;
});

const product = (policy: Partial<LicensePolicy> = {}, account = accountId) =>
  svc.product(account, { max_activations: undefined, ...policy });
const license = (productId: string, email = 'buyer@example.com') => svc.issue(accountId, productId, email);
const validate = (key: string, fingerprint = '', key_scope = 'full', account = accountId) =>
  svc.api.validateLicense(
    ValidateLicenseRequest.fromPartial({ account_id: account, key, fingerprint, key_scope, product_id: '' }),
  );
const read = (key: string) => svc.api.getLicense({ account_id: accountId, key });
const act = (key: string, action: string) => svc.api.transitionLicense({ account_id: accountId, key, action });
const update = (key: string, change: { customer_email?: string; metadata?: Record<string, string> }) =>
  svc.api.updateLicense({
    account_id: accountId,
    key,
    customer_email: change.customer_email,
    metadata: change.metadata ?? {},
    set_entitlements: false,
    entitlements: [],
  });
const activate = (key: string, fingerprint: string, name = '', account = accountId) =>
  svc.api.activate({ account_id: account, key, fingerprint, name });
const activations = async (key: string) =>
  (await svc.api.listActivations({ account_id: accountId, key, page: { limit: 100, starting_after: '' } })).data;
const deactivate = (key: string, activation_id: string) =>
  svc.api.deactivate({ account_id: accountId, key, activation_id, key_scope: 'full', fingerprint: '' });
const keysOf = async (filter: { status: string; product_id?: string }) =>
  (
    await svc.api.listLicenses({
      account_id: accountId,
      page: { limit: 100, starting_after: '' },
      product_id: filter.product_id ?? '',
      customer_email: '',
      status: filter.status,
    })
  ).data.map((l) => l.key);

/** The refusal a call ends in (its code, message and fields), or an error when it succeeds. */
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (err: AppError) => err,
  );
const keyOfEvent = (e: { data: unknown }) => (e.data as { license: { key: string } }).license.key;

/**
 * Waits for a sweeper pass that started after now: a licence that only a sweep can expire (nobody
 * reads it) is made, its expiry passes, and its license.expired arrives. No fixed sleep.
 */
async function aSweepHasPassed(): Promise<void> {
  const sentinel = await license(product({ duration_days: 1 }).id, 'sentinel@example.com');
  svc.clock.advance(2 * DAY);
  await events.waitFor((e) => e.type === 'license.expired' && keyOfEvent(e) === sentinel);
}

describe('licence policy on the product', () => {
  it('is set at creation, shown, and editable; licences keep the policy they were issued under', async () => {
    const p = product({ duration_days: 30, max_activations: 3, grace_days: 7, require_activation: true });
    const key = await license(p.id);
    await svc.updateProduct(p, { duration_days: 365, max_activations: undefined, grace_days: 0 });
    expect((await read(key)).policy?.duration_days).toBe(30);
    // A licence issued now is under the product's new policy.
    expect((await read(await license(p.id))).policy?.duration_days).toBe(365);
  });

  it('a licence issued once product.updated has arrived has the new policy (the issuing cache forgets the product)', async () => {
    let p = product({ duration_days: 30 });
    await license(p.id); // the licence service now remembers the product
    for (const days of [365, 90, 7, 400]) {
      p = await svc.updateProduct(p, { duration_days: days });
      // The event reaches the service a moment after the update answers (docs/architecture.md, "A map of
      // the caches": within the second); from then on every licence is issued under the new policy.
      await eventually(async () => expect((await read(await license(p.id))).policy?.duration_days).toBe(days));
      expect((await read(await license(p.id))).policy?.duration_days).toBe(days);
    }
  });
});

describe('states and transitions', () => {
  it('suspend, reinstate, revoke: each changes validation and publishes its event', async () => {
    const key = await license(product().id);
    expect((await act(key, 'suspend')).status).toBe('suspended');
    expect(await validate(key)).toMatchObject({
      valid: false,
      code: 'suspended',
      next_action: 'contact_vendor',
      license: { status: 'suspended' },
    });
    expect((await act(key, 'reinstate')).status).toBe('active');
    expect(await validate(key)).toMatchObject({ valid: true, code: 'valid', next_action: 'none' });
    expect((await act(key, 'revoke')).status).toBe('revoked');
    expect(await validate(key)).toMatchObject({ valid: false, code: 'revoked' });
    for (const type of ['license.suspended', 'license.reinstated', 'license.revoked']) {
      await events.waitFor((e) => e.type === type && keyOfEvent(e) === key);
    }
  });

  it('a transition that is not allowed is 409 conflict with a clear detail, and changes nothing', async () => {
    const key = await license(product().id);
    await act(key, 'revoke');
    expect(await refusal(act(key, 'reinstate'))).toMatchObject({
      code: 'conflict',
      message: 'a revoked licence cannot be reinstated: revocation is final',
    });
    expect((await refusal(act(key, 'suspend'))).code).toBe('conflict');
    expect((await refusal(act(key, 'renew'))).code).toBe('conflict');
    expect((await read(key)).status).toBe('revoked');
    const fresh = await license(product().id);
    expect((await refusal(act(fresh, 'reinstate'))).message).toBe('the licence is not suspended');
    expect((await refusal(act(fresh, 'renew'))).message).toMatch(/perpetual/);
    expect((await read(fresh)).status).toBe('active');
  });

  it('expiry and grace follow the clock; license.expired is published once; renew brings it back', async () => {
    const key = await license(product({ duration_days: 30, grace_days: 5 }).id);
    const created = await read(key);
    expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBe(30 * DAY);
    svc.clock.advance(31 * DAY);
    expect(await validate(key)).toMatchObject({
      valid: true,
      code: 'expired_in_grace',
      next_action: 'renew',
      license: { status: 'active' },
    });
    svc.clock.advance(5 * DAY);
    expect(await validate(key)).toMatchObject({
      valid: false,
      code: 'expired',
      next_action: 'renew',
      license: { status: 'expired' },
    });
    expect(await keysOf({ status: 'expired' })).toContain(key);
    // Published by the expiry sweep (every second here): a pass over a busy store may take a while.
    const expired = await events.waitFor((e) => e.type === 'license.expired' && keyOfEvent(e) === key, 30_000);
    await aSweepHasPassed(); // which would have published it again
    expect(events.all().filter((e) => e.type === 'license.expired' && keyOfEvent(e) === key)).toEqual([expired]);
    const renewed = await act(key, 'renew');
    expect(renewed.status).toBe('active');
    expect(Date.parse(renewed.expires_at)).toBeGreaterThan(svc.clock.now().getTime() + 29 * DAY);
    expect((await validate(key)).code).toBe('valid');
    await events.waitFor((e) => e.type === 'license.renewed' && keyOfEvent(e) === key);
  }, 60_000);

  it('with two licence-service instances sweeping, each licence gets exactly one license.expired', async () => {
    await svc.extraInstance();
    const id = product({ duration_days: 1 }).id;
    const keys = [await license(id), await license(id), await license(id)];
    svc.clock.advance(2 * DAY);
    for (const key of keys) await events.waitFor((e) => e.type === 'license.expired' && keyOfEvent(e) === key);
    for (let i = 0; i < 3; i++) await aSweepHasPassed(); // several passes, by either instance
    for (const key of keys) {
      expect(events.all().filter((e) => e.type === 'license.expired' && keyOfEvent(e) === key)).toHaveLength(1);
    }
  });

  it('PATCH changes the customer e-mail and metadata; bad input is 400', async () => {
    const key = await license(product().id);
    expect(
      await update(key, { customer_email: 'new@example.com', metadata: { order: 'A-1', seats: '3' } }),
    ).toMatchObject({ customer_email: 'new@example.com', metadata: { order: 'A-1', seats: '3' } });
    expect((await update(key, { metadata: { seats: '' } })).metadata).toEqual({ order: 'A-1' });
    expect((await refusal(update(key, { customer_email: 'nope' }))).code).toBe('invalid_request');
    expect((await refusal(update(key, { metadata: { 'bad key!': 'x' } }))).code).toBe('invalid_request');
    // A dotted key would be a path in the stored document (FerretDB refuses the write): refused naming it.
    for (const bad of ['a.b', '$set', '.']) {
      const refused = await refusal(update(key, { metadata: { [bad]: 'x' } }));
      expect([refused.code, refused.fieldErrors]).toEqual([
        'invalid_request',
        [{ field: `metadata.${bad}`, message: expect.stringContaining('no "." or "$"') }],
      ]);
    }
    expect((await read(key)).metadata).toEqual({ order: 'A-1' });
    expect((await refusal(update(key, {}))).code).toBe('invalid_request'); // nothing to change
    await events.waitFor((e) => e.type === 'license.updated' && keyOfEvent(e) === key);
  });
});

describe("after expiry, as the policy's expiration_strategy says", () => {
  it('revoke_access: revoked at the end of grace; the sweep stores it so with license.revoked; restrict and maintain_access only expire', async () => {
    const grace = { duration_days: 30, grace_days: 2 };
    const revoking = product({ ...grace, expiration_strategy: 'revoke_access' });
    const restricted = product(grace);
    const keeping = product({ ...grace, expiration_strategy: 'maintain_access' });
    const [r, x, k] = [await license(revoking.id), await license(restricted.id), await license(keeping.id)];
    svc.clock.advance(31 * DAY); // past the expiry, within the grace: alike
    for (const key of [r, x, k]) expect(await validate(key)).toMatchObject({ valid: true, code: 'expired_in_grace' });
    svc.clock.advance(2 * DAY);
    expect(await validate(r)).toMatchObject({
      valid: false,
      code: 'revoked',
      next_action: 'contact_vendor',
      license: { status: 'revoked' },
    });
    expect(await validate(x)).toMatchObject({ valid: false, code: 'expired', detail: 'the licence has expired' });
    expect(await validate(k)).toMatchObject({
      valid: false,
      code: 'expired',
      next_action: 'renew',
      detail: `the licence has expired; releases published before ${(await read(k)).expires_at} stay available`,
    });
    const revoked = await events.waitFor((e) => e.type === 'license.revoked' && keyOfEvent(e) === r, 30_000);
    for (const key of [r, x, k]) await events.waitFor((e) => e.type === 'license.expired' && keyOfEvent(e) === key);
    // Stored revoked (the list filters on the stored status), final, and announced once.
    expect(await keysOf({ status: 'revoked', product_id: revoking.id })).toEqual([r]);
    expect((await refusal(act(r, 'renew'))).message).toBe('a revoked licence cannot be renewed');
    await aSweepHasPassed();
    expect(events.all().filter((e) => e.type === 'license.revoked' && keyOfEvent(e) === r)).toEqual([revoked]);
    for (const [key, id] of [
      [x, restricted.id],
      [k, keeping.id],
    ]) {
      expect(await keysOf({ status: 'expired', product_id: id })).toEqual([key]);
      expect(events.all().filter((e) => e.type === 'license.revoked' && keyOfEvent(e) === key)).toEqual([]);
    }
    // An expired licence under restrict may still be renewed.
    expect((await act(x, 'renew')).status).toBe('active');
  }, 60_000);
});

describe('activations', () => {
  it('20 parallel activations with distinct fingerprints against a limit of 5 yield exactly 5', async () => {
    const key = await license(product({ max_activations: 5, require_activation: true }).id);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => activate(key, `machine-${i}`).catch((err: AppError) => err)),
    );
    expect(results.filter((r) => !(r instanceof AppError) && r.created)).toHaveLength(5);
    const refused = results.filter((r): r is AppError => r instanceof AppError);
    expect(refused.map((r) => r.code)).toEqual(Array(15).fill('conflict'));
    expect(refused.find((r) => r.validationCode === 'activation_limit_reached')?.message).toMatch(
      /activation_limit_reached/,
    );
    expect(await activations(key)).toHaveLength(5);
    // Every seat taken: the user frees one (the customer portal; POST …/seat-rescue mails the link).
    expect(await validate(key, 'machine-outsider')).toMatchObject({
      valid: false,
      code: 'activation_limit_reached',
      next_action: 'free_a_seat',
    });
  });

  it('re-activating a fingerprint returns the same activation (200); deactivating frees a slot', async () => {
    const key = await license(product({ max_activations: 1, require_activation: true }).id);
    expect(await validate(key)).toMatchObject({ code: 'not_activated', next_action: 'activate' });
    const first = await activate(key, 'laptop', 'Ada’s laptop');
    expect(first.created).toBe(true);
    expect(first.activation).toMatchObject({
      id: expect.stringMatching(/^act_/),
      fingerprint: 'laptop',
      name: 'Ada’s laptop',
      created_at: expect.any(String),
      lease_expires_at: '',
    });
    const again = await activate(key, 'laptop');
    expect(again.created).toBe(false);
    expect(again.activation!.id).toBe(first.activation!.id);
    expect(await validate(key, 'laptop')).toMatchObject({ valid: true, code: 'valid' });
    expect((await refusal(activate(key, 'desktop'))).code).toBe('conflict');
    await deactivate(key, first.activation!.id);
    expect((await refusal(deactivate(key, first.activation!.id))).code).toBe('not_found');
    expect((await validate(key, 'laptop')).code).toBe('not_activated');
    expect((await activate(key, 'desktop')).created).toBe(true);
    await events.waitFor((e) => e.type === 'license.activated' && keyOfEvent(e) === key);
    await events.waitFor(
      (e) =>
        e.type === 'license.deactivated' &&
        (e.data as { activation: { fingerprint: string } }).activation.fingerprint === 'laptop',
    );
  });

  it('refuses bad activation input and activating a suspended licence', async () => {
    const key = await license(product().id);
    expect((await refusal(activate(key, ''))).code).toBe('invalid_request');
    expect((await refusal(activate(key, 'x'.repeat(201)))).code).toBe('invalid_request');
    await act(key, 'suspend');
    const res = await refusal(activate(key, 'ok'));
    expect(res.code).toBe('conflict');
    expect(res.message).toBe('the licence is suspended: it cannot be activated');
  });
});

describe('who sees what', () => {
  it('a validate key sees customer_email only when the product allows it', async () => {
    const hidden = await license(product().id, 'private@example.com');
    const shown = await license(product({ validate_keys_see_email: true }).id, 'shared@example.com');
    expect((await validate(hidden, '', 'validate')).license?.customer_email).toBe('');
    expect((await validate(shown, '', 'validate')).license?.customer_email).toBe('shared@example.com');
    expect((await validate(hidden)).license?.customer_email).toBe('private@example.com'); // full keys see it
  });

  it('another account gets 404 on every licence endpoint', async () => {
    const key = await license(product({ max_activations: 2 }).id);
    const id = (await activate(key, 'm')).activation!.id;
    const other = newId('acct');
    const page = { limit: 100, starting_after: '' };
    const calls: [string, () => Promise<unknown>][] = [
      ['getLicense', () => svc.api.getLicense({ account_id: other, key })],
      [
        'updateLicense',
        () =>
          svc.api.updateLicense({
            account_id: other,
            key,
            customer_email: 'x@example.com',
            metadata: {},
            set_entitlements: false,
            entitlements: [],
          }),
      ],
      ...['suspend', 'reinstate', 'revoke', 'renew'].map(
        (action) =>
          [action, () => svc.api.transitionLicense({ account_id: other, key, action })] as [
            string,
            () => Promise<unknown>,
          ],
      ),
      ['listActivations', () => svc.api.listActivations({ account_id: other, key, page })],
      ['activate', () => activate(key, 'evil', '', other)],
      [
        'deactivate',
        () => svc.api.deactivate({ account_id: other, key, activation_id: id, key_scope: 'full', fingerprint: '' }),
      ],
    ];
    for (const [call, run] of calls)
      expect({ call, code: (await refusal(run())).code }).toEqual({ call, code: 'not_found' });
    expect(await validate(key, '', 'full', other)).toMatchObject({ valid: false, code: 'not_found' });
    expect(await read(key)).toMatchObject({ status: 'active', activations: 1 });
    expect(await activations(key)).toHaveLength(1);
  });

  it('lists by status and refuses an unknown status', async () => {
    const id = product().id;
    const a = await license(id);
    const b = await license(id);
    await act(b, 'suspend');
    expect(await keysOf({ status: 'suspended', product_id: id })).toEqual([b]);
    expect(await keysOf({ status: 'active', product_id: id })).toEqual([a]);
  });
});
