import { SECRETS_KEPT, SECRET_OVERLAP_MS, liveSecrets, newSecret } from '../domain/endpoint';
import type { EndpointDeps } from './deps';
import type { EndpointWithSecret } from './create-endpoint';
import { findEndpoint } from './read-endpoints';

/**
 * A new signing secret. The one it replaces keeps signing beside it for SECRET_OVERLAP_MS (24 hours),
 * so receivers can switch without a gap; any older one (from a rotation less than 24 hours ago) is
 * dropped now: an endpoint keeps at most two secrets.
 */
export async function rotateSecret(
  { endpoints, clock, secretKey }: EndpointDeps,
  accountId: string,
  id: string,
): Promise<EndpointWithSecret> {
  const current = await findEndpoint(endpoints, accountId, id);
  const now = clock.now();
  const secret = newSecret();
  const previous = liveSecrets(current.secrets, now)
    .slice(0, SECRETS_KEPT - 1)
    .map((s) => ({ ...s, expires_at: s.expires_at ?? new Date(now.getTime() + SECRET_OVERLAP_MS) }));
  await endpoints.update(accountId, id, {
    secrets: [{ sealed: secretKey.seal(Buffer.from(secret)), created_at: now, expires_at: null }, ...previous],
  });
  return { endpoint: current, secret };
}
