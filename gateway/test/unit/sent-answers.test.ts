import {
  DAY_MS,
  generateLicenseKey,
  type DomainEvent,
  type EventType,
  type RecordValidationsRequest,
} from '@licensing/proto';
import { createLogger, Metrics } from '@licensing/runtime';
import type { Principal } from '../../src/auth/principal';
import type { Clients } from '../../src/backends/clients';
import type { EventFeed } from '../../src/backends/event-feed';
import { LicenseValidator, type ValidationAnswer } from '../../src/license-validation/validator';
import { validationJson } from '../../src/license-validation/validation-json';
import { cacheKey, toCachedAnswer, ValidationCache } from '../../src/license-validation/cache';
import { ValidationTally } from '../../src/license-validation/tally';

// The gateway's answers kept for the rest of the second (sent-answers.ts), over a real cache, tally
// and metrics registry with a fake feed, licence service and clock: what is sent must always equal
// what judging afresh gives, and every answer sent must count.

class FakeFeed {
  connected = true;
  /** What the cache follows (license.>, product.updated): every event emitted here. */
  private followed?: (e: DomainEvent) => void;
  follow(_types: string[], handler: (e: DomainEvent) => void) {
    this.followed = handler;
    return this;
  }
  onStatus() {}
  emit(type: EventType, accountId: string, data: unknown) {
    this.followed!({ id: 'evt_1', type, account_id: accountId, created_at: '', data } as DomainEvent);
  }
}

const ACCOUNT = 'acct_1';
const full: Principal = {
  accountId: ACCOUNT,
  plan: 'pro',
  perMinuteOverride: 0,
  perHourOverride: 0,
  keyId: 'key_1',
  scope: 'full',
  credential: 'api_key',
};
const validateKey: Principal = { ...full, keyId: 'key_2', scope: 'validate' };
const toJson = (a: ValidationAnswer) => JSON.stringify(validationJson(a));

function setUp(start: string) {
  let now = Date.parse(start);
  const sent: RecordValidationsRequest[] = [];
  const clients = {
    licenses: {
      recordValidations: async (req: RecordValidationsRequest) => {
        sent.push(req);
        return {};
      },
    },
  } as unknown as Clients;
  const feed = new FakeFeed();
  const cache = new ValidationCache(
    100,
    60_000,
    feed as unknown as EventFeed,
    () => undefined,
    () => now,
  );
  const tally = new ValidationTally(clients, createLogger('test', 'silent'), 60_000);
  const metrics = new Metrics('gateway');
  const validator = new LicenseValidator(clients, cache, tally, { now: () => new Date(now) }, metrics);
  const remember = (
    key: string,
    license: {
      expires_at?: string;
      grace_days?: number;
      status?: string;
      require_activation?: boolean;
      fingerprints?: string[];
      /** The policy's, and the licence's own. */
      entitlements?: [string[], string[]];
    },
  ) => {
    const facts = toCachedAnswer({
      found: true,
      stored_status: license.status ?? 'active',
      activation_count: license.fingerprints?.length ?? 0,
      active_fingerprints: license.fingerprints ?? [],
      cacheable: true,
      remembered_since: '',
      active_lease_expires_at: [],
      retired_until: '',
      license: {
        id: 'lic_1',
        account_id: ACCOUNT,
        product_id: 'prod_1',
        key,
        customer_email: 'ada@example.com',
        status: license.status ?? 'active',
        expires_at: license.expires_at ?? '',
        created_at: start,
        policy: {
          duration_days: 0,
          max_activations: 3,
          grace_days: license.grace_days ?? 0,
          require_activation: license.require_activation ?? false,
          validate_keys_see_email: false,
          refund_action: 'revoke',
          entitlements: license.entitlements?.[0] ?? [],
          expiration_strategy: 'restrict',
        },
        activations: 0,
        metadata: {},
        last_validated_at: '',
        subscription: undefined,
        entitlements: [...new Set(license.entitlements?.flat() ?? [])].sort(),
        extra_entitlements: license.entitlements?.[1] ?? [],
      },
    })!;
    const id = cacheKey(ACCOUNT, key);
    cache.set(id, facts, cache.begin(id));
  };
  /** What the fast path sends, and what judging afresh (answer(), not kept) would have sent at the same moment. */
  const ask = (p: Principal, key: string, fingerprint = '') => {
    const local = validator.local(p, { key, productId: '', fingerprint })!;
    const kept = validator.answerSent(p, local, toJson);
    const fresh = toJson(validator.answer(p, local));
    return { kept, fresh };
  };
  const metric = async (pattern: RegExp) => {
    const line = (await metrics.render()).body.split('\n').find((l) => pattern.test(l));
    return line ? Number(line.split(' ').pop()) : 0;
  };
  return { validator, cache, feed, tally, sent, remember, ask, metric, tick: (ms: number) => (now += ms) };
}

describe('answers kept for the rest of the second', () => {
  it('sends the same answer to the same request within a second, and a new one in the next', () => {
    const s = setUp('2026-06-01T10:00:00.100Z');
    const key = generateLicenseKey();
    s.remember(key, {});
    const first = s.ask(full, key);
    s.tick(500);
    const again = s.ask(full, key);
    expect(again.kept).toBe(first.kept); // the very same answer, not judged again
    expect(again.kept.body).toBe(again.fresh);
    expect(JSON.parse(again.kept.body)).toMatchObject({
      valid: true,
      code: 'valid',
      cache_until: '2026-06-02T10:00:00.000Z',
    });
    s.tick(400); // 10:00:01.000: the next second
    const next = s.ask(full, key);
    expect(next.kept).not.toBe(first.kept);
    expect(JSON.parse(next.kept.body).cache_until).toBe('2026-06-02T10:00:01.000Z');
    expect(next.kept.body).toBe(next.fresh);
    expect(next.kept.length).toBe(Buffer.byteLength(next.fresh));
  });

  it('stops at an expiry inside the second: valid before it, the grace answer from it on', () => {
    const s = setUp('2026-06-01T10:00:00.100Z');
    const key = generateLicenseKey();
    s.remember(key, { expires_at: '2026-06-01T10:00:00.600Z', grace_days: 3 });
    expect(JSON.parse(s.ask(full, key).kept.body).code).toBe('valid');
    s.tick(499); // 10:00:00.599
    expect(JSON.parse(s.ask(full, key).kept.body).code).toBe('valid');
    s.tick(1); // 10:00:00.600: expired, in grace
    const grace = s.ask(full, key);
    expect(JSON.parse(grace.kept.body)).toMatchObject({ valid: true, code: 'expired_in_grace', status: 'active' });
    expect(grace.kept.body).toBe(grace.fresh);
    s.tick(3 * DAY_MS); // the end of grace, at the same millisecond of a later second
    s.remember(key, { expires_at: '2026-06-01T10:00:00.600Z', grace_days: 3 }); // read again (the TTL is a minute)
    const expired = s.ask(full, key);
    expect(JSON.parse(expired.kept.body)).toMatchObject({ valid: false, code: 'expired', status: 'expired' });
    expect(expired.kept.body).toBe(expired.fresh);
  });

  it('answers another scope, machine or key on its own (the e-mail shows only where the scope allows)', () => {
    const s = setUp('2026-06-01T10:00:00.100Z');
    const key = generateLicenseKey();
    s.remember(key, { require_activation: true, fingerprints: ['mac-1'] });
    const onMac1 = s.ask(full, key, 'mac-1');
    const onMac2 = s.ask(full, key, 'mac-2');
    const fromApp = s.ask(validateKey, key, 'mac-1');
    expect(JSON.parse(onMac1.kept.body)).toMatchObject({ code: 'valid', customer_email: 'ada@example.com' });
    expect(JSON.parse(onMac2.kept.body)).toMatchObject({ code: 'not_activated', valid: false });
    expect(JSON.parse(fromApp.kept.body)).toMatchObject({ code: 'valid', customer_email: null });
    for (const { kept, fresh } of [onMac1, onMac2, fromApp]) expect(kept.body).toBe(fresh);
    // Alternating requests are each answered right, judged again when they differ from the last.
    expect(JSON.parse(s.ask(full, key, 'mac-1').kept.body).code).toBe('valid');
  });

  it('judges a request for entitlements from the cached facts, and never keeps its answer for one asking none', () => {
    const s = setUp('2026-06-01T10:00:00.100Z');
    const key = generateLicenseKey();
    s.remember(key, { entitlements: [['sync', 'pdf'], ['beta']] });
    const plain = s.ask(full, key);
    expect(JSON.parse(plain.kept.body)).toMatchObject({ code: 'valid', entitlements: ['beta', 'pdf', 'sync'] });
    const asking = (entitlements: string[]) =>
      s.validator.local(full, { key, productId: '', fingerprint: '', entitlements })!;
    const has = s.validator.answer(full, asking(['beta', 'sync']));
    expect(has).toMatchObject({ valid: true, code: 'valid' });
    const lacks = s.validator.answerSent(full, asking(['sync', 'sso']), toJson);
    expect(JSON.parse(lacks.body)).toMatchObject({
      valid: false,
      code: 'entitlements_missing',
      detail: 'the licence does not include the entitlement sso',
      next_action: 'contact_vendor',
      entitlements: ['beta', 'pdf', 'sync'],
    });
    // The answer kept for the plain request is still the one sent to it.
    expect(s.ask(full, key).kept).toBe(plain.kept);
  });

  it('is gone with its licence: an event that changes the licence drops the entry and what it sent', () => {
    const s = setUp('2026-06-01T10:00:00.100Z');
    const key = generateLicenseKey();
    s.remember(key, {});
    expect(JSON.parse(s.ask(full, key).kept.body).code).toBe('valid');
    s.feed.emit('license.suspended', ACCOUNT, { license: { key } });
    expect(s.validator.local(full, { key, productId: '', fingerprint: '' })).toBeUndefined(); // asks the service now
    s.remember(key, { status: 'suspended' });
    expect(JSON.parse(s.ask(full, key).kept.body).code).toBe('suspended');
  });

  it('counts every answer it sends: in the tally sent to the licence service and in the metrics at each read', async () => {
    const s = setUp('2026-06-01T10:00:00.100Z');
    const key = generateLicenseKey();
    s.remember(key, {});
    const local = s.validator.local(full, { key, productId: '', fingerprint: 'mac-1' })!;
    for (let i = 0; i < 5; i++) s.validator.answerSent(full, local, toJson);
    expect(await s.metric(/^licensing_validations_total\{.*code="valid"/)).toBe(5);
    expect(await s.metric(/^licensing_validation_cache_total\{.*result="hit"/)).toBe(5);
    s.tick(2000);
    for (let i = 0; i < 3; i++) s.validator.answerSent(full, local, toJson);
    expect(await s.metric(/^licensing_validations_total\{.*code="valid"/)).toBe(8);
    await s.tally.flush();
    expect(s.sent).toHaveLength(1);
    expect(s.sent[0].tallies).toEqual([
      { account_id: ACCOUNT, hour: '2026-06-01T10:00:00.000Z', validations: 8, valid: 8, by_code: { valid: 8 } },
    ]);
    expect(s.sent[0].last_validated).toEqual([
      { account_id: ACCOUNT, license_id: 'lic_1', at: '2026-06-01T10:00:02.100Z' },
    ]);
    expect(s.sent[0].seen).toEqual([
      expect.objectContaining({
        license_id: 'lic_1',
        code: 'valid',
        fingerprint: 'mac-1',
        count: 8,
        last_at: '2026-06-01T10:00:02.100Z',
      }),
    ]);
    // A cell is used again after a flush: it counts from zero.
    s.validator.answerSent(full, local, toJson);
    await s.tally.flush();
    expect(s.sent[1].tallies[0].validations).toBe(1);
  });

  it('answers a key the account does not have from its negative entry, counted as not_found', async () => {
    const s = setUp('2026-06-01T10:00:00.100Z');
    const key = generateLicenseKey();
    const id = cacheKey(ACCOUNT, key);
    s.cache.set(id, { found: false }, s.cache.begin(id));
    const { kept, fresh } = s.ask(full, key);
    expect(JSON.parse(kept.body)).toMatchObject({
      valid: false,
      code: 'not_found',
      product_id: null,
      cache_until: '2026-06-01T10:00:00.000Z',
    });
    expect(kept.body).toBe(fresh);
    expect(s.ask(full, key).kept).toBe(kept);
    expect(await s.metric(/^licensing_validations_total\{.*code="not_found"/)).toBe(4); // two kept, two judged afresh
  });
});
