import { AppError } from '@licensing/runtime';
import { AUTH_STALE_IF_UNAVAILABLE_MS, AuthCache, type Principal } from '../../gateway/src/auth/authenticate';
import { gatewaySchema } from '../../gateway/src/config';
import type { EventFeed } from '../../gateway/src/backends/event-feed';

// A bus that is up but never delivers: the revocation event is late (or lost).
const silentBus = { connected: true, onStatus: () => undefined, subscribe: () => undefined } as unknown as EventFeed;
const principal: Principal = {
  accountId: 'acct_1',
  plan: 'pro',
  perMinuteOverride: 0,
  perHourOverride: 0,
  keyId: 'key_1',
  scope: 'full',
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
});
