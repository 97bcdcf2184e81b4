import { AppError } from '@licensing/runtime';
import { AUTH_STALE_IF_UNAVAILABLE_MS, AuthCache } from '../../src/auth/auth-cache';
import type { Principal } from '../../src/auth/principal';
import { gatewaySchema } from '../../src/config';
import type { EventFeed } from '../../src/backends/event-feed';

// A bus that is up but never delivers: the revocation event is late (or lost).
const silentBus = { connected: true, onStatus: () => undefined, subscribe: () => undefined } as unknown as EventFeed;
const principal: Principal = {
  accountId: 'acct_1',
  plan: 'pro',
  perMinuteOverride: 0,
  perHourOverride: 0,
  keyId: 'key_1',
  scope: 'full',
  credential: 'api_key',
};

describe('the API-key cache', () => {
  afterEach(() => jest.restoreAllMocks());

  it('trusts a key at most 1 s by default and by limit, so a revoked key is refused within a second without its event', () => {
    expect((gatewaySchema.AUTH_CACHE_TTL_MS as { default?: number }).default).toBeLessThanOrEqual(1000);
    expect((gatewaySchema.AUTH_CACHE_TTL_MS as { max?: number }).max).toBeLessThanOrEqual(1000);
    let now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const cache = new AuthCache((gatewaySchema.AUTH_CACHE_TTL_MS as { default: number }).default, silentBus);
    cache.set('digest', principal, cache.begin());
    expect(cache.get('digest')).toBe(principal);
    now += 1001;
    expect(cache.get('digest')).toBeUndefined(); // asked again: the account service says "revoked"
  });

  it('refreshes a key in use ahead of its expiry, once at a time, so traffic never waits; a key found revoked is dropped', async () => {
    let now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    let answer: Principal | null = principal;
    const asked: string[] = [];
    const cache = new AuthCache(1000, silentBus, async (token) => {
      asked.push(token);
      return answer;
    });
    cache.set('digest', principal, cache.begin());
    now += 400;
    expect(cache.get('digest', 'lk_token')).toBe(principal);
    expect(asked).toEqual([]); // fresh: nothing to ask
    now += 200; // past half the TTL
    cache.get('digest', 'lk_token');
    cache.get('digest', 'lk_token');
    expect(asked).toEqual(['lk_token']); // one refresh at a time
    await new Promise((r) => setImmediate(r));
    now += 900; // 1.5 s after the first set: alive only because it was renewed
    expect(cache.get('digest', 'lk_token')).toBe(principal); // (and renewed again)
    await new Promise((r) => setImmediate(r));
    answer = null; // revoked meanwhile
    now += 600;
    cache.get('digest', 'lk_token');
    await new Promise((r) => setImmediate(r));
    expect(cache.get('digest', 'lk_token')).toBeUndefined();
  });

  it('while the account service answers "unavailable" (its store away), keeps trusting a recently verified key, up to a bound', async () => {
    let now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    let answer: () => Promise<Principal | null> = async () => principal;
    const cache = new AuthCache(1000, silentBus, () => answer());
    const settle = () => new Promise((r) => setImmediate(r));
    cache.set('digest', principal, cache.begin());
    answer = async () => {
      throw new AppError('service_unavailable', 'a backing service is unavailable');
    };
    now += 600;
    expect(cache.get('digest', 'lk_token')).toBe(principal); // starts a refresh, which finds the service away
    await settle();
    now += 5000; // long past the 1 s TTL: still trusted, and asked again
    expect(cache.get('digest', 'lk_token')).toBe(principal);
    await settle();
    now = 1_000_000 + AUTH_STALE_IF_UNAVAILABLE_MS; // the bound, counted from the last verification
    expect(cache.get('digest', 'lk_token')).toBeUndefined();
  });

  it('a key past its TTL is not trusted while the account service answers (a refusal, or any other error)', async () => {
    let now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const cache = new AuthCache(1000, silentBus, async () => {
      throw new Error('a bug, not an outage');
    });
    cache.set('digest', principal, cache.begin());
    now += 600;
    cache.get('digest', 'lk_token');
    await new Promise((r) => setImmediate(r));
    now += 500;
    expect(cache.get('digest', 'lk_token')).toBeUndefined();
    cache.noteAnswer(new AppError('service_unavailable', 'away'));
    cache.noteAnswer(); // the service answered again
    expect(cache.get('digest', 'lk_token')).toBeUndefined();
  });

  /** A bus the test drives: it delivers events and drops or restores the link. */
  function drivenBus() {
    const handlers = new Map<string, (event: { account_id: string }) => void>();
    const listeners: Array<(connected: boolean) => void> = [];
    const bus = {
      connected: true,
      onStatus: (l: (connected: boolean) => void) => void listeners.push(l),
      subscribe: (type: string, h: (event: { account_id: string }) => void) => void handlers.set(type, h),
    };
    return {
      feed: bus as unknown as EventFeed,
      deliver: (type: string, accountId: string) => handlers.get(type)!({ account_id: accountId }),
      link(up: boolean) {
        bus.connected = up;
        for (const l of listeners) l(up);
      },
    };
  }
  const other: Principal = { ...principal, keyId: 'key_2' };
  const elsewhere: Principal = { ...principal, accountId: 'acct_2', keyId: 'key_3' };

  it.each(['api_key.revoked', 'account.updated'])(
    '%s evicts every key of its account at once, and spoils a look-up in flight',
    (type) => {
      const { feed, deliver } = drivenBus();
      const cache = new AuthCache(1000, feed);
      cache.set('d1', principal, cache.begin());
      cache.set('d2', other, cache.begin());
      cache.set('d3', elsewhere, cache.begin());
      const inFlight = cache.begin();
      deliver(type, 'acct_1');
      expect(cache.get('d1')).toBeUndefined();
      expect(cache.get('d2')).toBeUndefined();
      expect(cache.get('d3')).toBe(elsewhere); // another account's key stays
      cache.set('d1', principal, inFlight); // read before the event: not kept
      expect(cache.get('d1')).toBeUndefined();
      cache.set('d1', principal, cache.begin());
      expect(cache.get('d1')).toBe(principal);
    },
  );

  it('is bypassed while NATS is away (an eviction could be missed) and empty when it is back', () => {
    const { feed, link } = drivenBus();
    const cache = new AuthCache(1000, feed);
    cache.set('d1', principal, cache.begin());
    const inFlight = cache.begin();
    link(false);
    expect(cache.get('d1')).toBeUndefined();
    cache.set('d1', principal, cache.begin()); // nothing is stored meanwhile
    link(true);
    expect(cache.get('d1')).toBeUndefined(); // forgotten
    cache.set('d1', principal, inFlight); // a look-up from before the outage is not kept
    expect(cache.get('d1')).toBeUndefined();
    cache.set('d1', principal, cache.begin());
    expect(cache.get('d1')).toBe(principal);
  });

  it('caches nothing with a TTL of 0', () => {
    const cache = new AuthCache(0, drivenBus().feed);
    cache.set('d1', principal, cache.begin());
    expect(cache.get('d1')).toBeUndefined();
  });
});
