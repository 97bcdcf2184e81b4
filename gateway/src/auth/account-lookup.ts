import { AppError } from '@licensing/runtime';
import { roleOfScope } from '@licensing/proto';
import type { Clients } from '../backends/clients';
import type { Principal } from './principal';

/** Asks the account service who a key is (unauthorized AppError when it is no key). */
export async function lookUp(clients: Pick<Clients, 'accounts'>, token: string): Promise<Principal> {
  const auth = await clients.accounts.authenticate({ secret: token });
  const account = auth.account!;
  return {
    accountId: account.id,
    plan: account.plan,
    perMinuteOverride: account.per_minute_limit,
    perHourOverride: account.per_hour_limit,
    keyId: auth.key_id,
    scope: auth.scope === 'validate' ? 'validate' : 'full',
    role: auth.role || roleOfScope(auth.scope),
    credential: 'api_key',
  };
}

/** The background re-check of a cached key: null when the account service says it is no longer valid. */
export function recheckWith(clients: Pick<Clients, 'accounts'>) {
  return (token: string): Promise<Principal | null> =>
    lookUp(clients, token).catch((err) => {
      if (err instanceof AppError && err.code === 'unauthorized') return null;
      throw err;
    });
}

/** The account service's answer "I cannot answer now" (503: its store, or the service itself, away). */
export const accountsUnavailable = (err: unknown): boolean =>
  err instanceof AppError && err.code === 'service_unavailable';
