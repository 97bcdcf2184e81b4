import { seal } from '@licensing/runtime';
import { SECRET_OVERLAP_MS, liveSecrets, newSecret } from '../domain/endpoint';
import type { EndpointDeps } from './deps';
import type { EndpointWithSecret } from './create-endpoint';
import { findEndpoint } from './read-endpoints';

/** A new signing secret; the previous ones keep signing for 24 hours, so receivers can switch without a gap. */
export async function rotateSecret(
  { endpoints, clock, secretKey }: EndpointDeps,
  accountId: string,
  id: string,
): Promise<EndpointWithSecret> {
  const current = await findEndpoint(endpoints, accountId, id);
  const now = clock.now();
  const secret = newSecret();
  const kept = liveSecrets(current.secrets, now).map((s) => ({
    ...s,
    expires_at: s.expires_at ?? new Date(now.getTime() + SECRET_OVERLAP_MS),
  }));
  await endpoints.update(accountId, id, {
    secrets: [{ sealed: seal(Buffer.from(secret), secretKey), created_at: now, expires_at: null }, ...kept],
  });
  return { endpoint: current, secret };
}
