import type { AuditEntry } from '@licensing/proto';
import type { PeopleDeps } from './deps';

/** The latest API key creations and revocations of the account, newest first (a revocation before its creation). */
export async function listAuditEntries(
  { people }: Pick<PeopleDeps, 'people'>,
  accountId: string,
  requestedLimit: number,
): Promise<AuditEntry[]> {
  const limit = Math.min(Math.max(requestedLimit || 10, 1), 100);
  const entries: AuditEntry[] = [];
  for (const k of await people.recentKeys(accountId)) {
    const key = { key_id: k._id, key_prefix: k.prefix, key_name: k.name };
    entries.push({ type: 'api_key.created', actor: k.created_by, at: k.created_at.toISOString(), ...key });
    if (k.revoked_at)
      entries.push({
        type: 'api_key.revoked',
        actor: k.revoked_by ?? 'operator',
        at: k.revoked_at.toISOString(),
        ...key,
      });
  }
  entries.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : a.type === 'api_key.revoked' ? -1 : 1));
  return entries.slice(0, limit);
}
