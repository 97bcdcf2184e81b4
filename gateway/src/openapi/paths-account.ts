import { auditEventList } from '../request-shapes/operations';
import { listOf, ref } from './schemas';
import { type Op, op, pageParams, pathParam } from './operation';
import { queryParameters } from './shape-schema';

// The account's own resources: its API keys and its audit log.
export const accountPaths: Record<string, Record<string, Op>> = {
  '/api/v1/api-keys': {
    get: op('listApiKeys', {
      summary: "List the account's live API keys",
      tag: 'Account',
      params: pageParams,
      ok: { 200: { description: 'A page of live keys, newest first (never a secret)', schema: listOf('ApiKey') } },
    }),
    post: op('createApiKey', {
      summary: 'Create an API key with a role',
      tag: 'Account',
      description:
        'The key is in this answer only. Its role may not be above the role of the key that creates it (403 forbidden); an account has at most 50 live keys (409).',
      body: 'ApiKeyCreate',
      ok: { 201: { description: 'The key with its secret', schema: ref('ApiKeyWithSecret') } },
    }),
  },
  '/api/v1/api-keys/{id}': {
    delete: op('revokeApiKey', {
      summary: 'Revoke an API key',
      tag: 'Account',
      description:
        "It stops working on every gateway at once. A key of a role above the revoking key's is refused (403 forbidden); revoking a revoked key answers it as it is.",
      params: [pathParam('id', 'API key id (key_…)')],
      ok: { 200: { description: 'The key, revoked', schema: ref('ApiKey') } },
    }),
  },
  '/api/v1/audit-events': {
    get: op('listAuditEvents', {
      summary: "List the account's audit log",
      tag: 'Account',
      description:
        'Every change made in the account: by a member, an API key, an app (its licence) or the system, with the request and address it came from. Newest first; entries are kept AUDIT_RETENTION_DAYS (400 by default) and nothing changes or removes one. until must be after since.',
      params: queryParameters(auditEventList),
      ok: { 200: { description: 'A page of entries, newest first', schema: listOf('AuditEvent') } },
    }),
  },
};
