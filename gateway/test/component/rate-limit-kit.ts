import type { Redis } from 'ioredis';
import { client } from '../../../test/support/stack';
import { fakeAccount, type FakeAccount } from './fake-credential-answers';

// What the rate-limit tests share: accounts the faked account service knows, bursts of requests, and
// the counters the gateway keeps in Redis under the topology's prefix.

export type Api = ReturnType<typeof client>;
export type Limits = { plan?: string; per_minute_limit?: number; per_hour_limit?: number };

/** n sequential requests; returns the statuses and the last response. */
export async function burst(api: Api, n: number) {
  const statuses: number[] = [];
  let last: Awaited<ReturnType<Api>> | undefined;
  for (let i = 0; i < n; i++) {
    last = await api('GET', '/api/v1/products');
    statuses.push(last.status);
  }
  return { statuses, last: last! };
}

/**
 * A maker of accounts of a plan (with these operator overrides) that the account service answering
 * from `accounts` knows, each with its full key and a client of the gateway at `url()`.
 */
export const accountsIn =
  (accounts: FakeAccount[], url: () => string) =>
  (plan: string, limits: Limits = {}) => {
    const acct = fakeAccount(plan, limits);
    accounts.push(acct);
    const [key] = acct.keys;
    return { acct, accountId: acct.account.id, keyId: key.id, apiKey: key.secret, api: client(url(), key.secret) };
  };

/** The gateway's count in a window for a key, account or address, as Redis holds it. */
export const counterIn = (redis: () => Redis, prefix: () => string) => async (window: string, id: string) =>
  Number(await redis().get(`${prefix()}:${window}:${id}`));

/** Deletes the run's counters (the topology's prefix is the run's own). */
export async function clearCounters(redis: Redis, prefix: string): Promise<void> {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
}
