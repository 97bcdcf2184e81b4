import { generateLicenseKey, type LicenseFacts, type ValidateLicenseResponse } from '@licensing/proto';
import { createLogger, Metrics } from '@licensing/runtime';
import type { Principal } from '../../src/auth/principal';
import type { Clients } from '../../src/backends/clients';
import type { EventFeed } from '../../src/backends/event-feed';
import { ValidationCache } from '../../src/license-validation/cache';
import { ValidationTally } from '../../src/license-validation/tally';
import { LicenseValidator } from '../../src/license-validation/validator';

// The gateway's look-ups of licences it does not hold (validator.ts remote()): when one is on its way,
// the requests that miss the same key meanwhile wait for it and answer from what it cached, so the
// end of an entry (its TTL, an eviction) costs one call to the licence service, not one per
// connection validating that licence. Over a real cache, tally and metrics, with a fake licence
// service whose answers this test releases.

const ACCOUNT = 'acct_1';
const caller: Principal = {
  accountId: ACCOUNT,
  plan: 'pro',
  perMinuteOverride: 0,
  perHourOverride: 0,
  keyId: 'key_1',
  scope: 'full',
  credential: 'api_key',
};
const START = '2026-06-01T10:00:00.000Z';

const factsOf = (key: string, cacheable = true): LicenseFacts =>
  ({
    found: true,
    stored_status: 'active',
    activation_count: 0,
    active_fingerprints: [],
    cacheable,
    remembered_since: '',
    active_lease_expires_at: [],
    retired_until: '',
    license: {
      id: 'lic_1',
      account_id: ACCOUNT,
      product_id: 'prod_1',
      key,
      customer_email: 'ada@example.com',
      status: 'active',
      expires_at: '',
      created_at: START,
      policy: {
        duration_days: 0,
        max_activations: 3,
        grace_days: 0,
        require_activation: false,
        validate_keys_see_email: false,
        refund_action: 'revoke',
        entitlements: [],
      },
      activations: 0,
      metadata: {},
      last_validated_at: '',
      subscription: undefined,
      entitlements: [],
      extra_entitlements: [],
    },
  }) as unknown as LicenseFacts;

function setUp() {
  const asked: { key: string; answer: (r: ValidateLicenseResponse) => void; fail: (e: Error) => void }[] = [];
  const clients = {
    licenses: {
      validateLicense: (req: { key: string }) =>
        new Promise<ValidateLicenseResponse>((answer, fail) => asked.push({ key: req.key, answer, fail })),
      recordValidations: async () => ({}),
    },
  } as unknown as Clients;
  const feed = { connected: true, follow: () => feed, onStatus() {} };
  const cache = new ValidationCache(
    100,
    60_000,
    feed as unknown as EventFeed,
    () => undefined,
    () => Date.parse(START),
  );
  const tally = new ValidationTally(clients, createLogger('test', 'silent'), 60_000);
  const metrics = new Metrics('gateway');
  const validator = new LicenseValidator(clients, cache, tally, { now: () => new Date(START) }, metrics);
  const validate = (key: string) => validator.remote(caller, { key, productId: '', fingerprint: '' });
  const misses = async () =>
    Number(
      (await metrics.render()).body
        .split('\n')
        .find((l) => /^licensing_validation_cache_total\{result="miss"/.test(l))
        ?.split(' ')
        .pop() ?? 0,
    );
  const answered = (key: string, cacheable = true): ValidateLicenseResponse =>
    ({ valid: true, code: 'valid', detail: 'the licence is valid', facts: factsOf(key, cacheable) }) as never;
  return { asked, validate, misses, answered };
}

const turn = () => new Promise((r) => setImmediate(r));

it('twenty misses of one licence while its look-up is on its way make one call, and all answer as it did', async () => {
  const s = setUp();
  const key = generateLicenseKey();
  const answers = Array.from({ length: 20 }, () => s.validate(key));
  await turn();
  await turn();
  expect(s.asked).toHaveLength(1);
  s.asked[0].answer(s.answered(key));
  const all = await Promise.all(answers);
  for (const a of all) expect(a).toMatchObject({ valid: true, code: 'valid' });
  expect(s.asked).toHaveLength(1);
  expect(await s.misses()).toBe(1); // the others were answered from what it cached
});

it('when the look-up fails, or its answer could not be cached, each waiting request asks for itself', async () => {
  const s = setUp();
  const failing = generateLicenseKey();
  const waiting = [s.validate(failing), s.validate(failing)];
  await turn();
  await turn();
  expect(s.asked).toHaveLength(1);
  s.asked[0].fail(new Error('unavailable'));
  await turn();
  await turn();
  expect(s.asked).toHaveLength(2); // the waiting one asked in turn
  s.asked[1].answer(s.answered(failing));
  const [first, second] = await Promise.allSettled(waiting);
  expect(first.status).toBe('rejected'); // its own failure
  expect(second).toMatchObject({ status: 'fulfilled', value: { valid: true } });

  const uncacheable = generateLicenseKey();
  const pair = [s.validate(uncacheable), s.validate(uncacheable)];
  await turn();
  await turn();
  s.asked[2].answer(s.answered(uncacheable, false));
  await turn();
  await turn();
  expect(s.asked).toHaveLength(4); // nothing cached: the second asked too
  s.asked[3].answer(s.answered(uncacheable, false));
  for (const a of await Promise.all(pair)) expect(a).toMatchObject({ valid: true });
});
