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
  '/api/v1/members': {
    get: op('listMembers', {
      summary: "List the account's members",
      tag: 'Account',
      params: pageParams,
      ok: { 200: { description: 'A page of members (invited and active), newest first', schema: listOf('Member') } },
    }),
    post: op('inviteMember', {
      summary: 'Invite a member by e-mail',
      tag: 'Account',
      description:
        "Mails a one-time link, valid 7 days, with which the person sets their name and password. The role may not be above the inviting key's (403); an address already a member is 409.",
      body: 'MemberInvite',
      ok: { 201: { description: 'The member, invited', schema: ref('Member') } },
    }),
  },
  '/api/v1/members/transfer-ownership': {
    post: op('transferOwnership', {
      summary: 'Hand ownership to another member',
      tag: 'Account',
      description:
        'The owner only (an API key is never the owner: 403). The member, active, becomes the owner; the owner becomes an admin.',
      body: 'OwnershipTransfer',
      ok: { 200: { description: 'The new owner', schema: ref('Member') } },
    }),
  },
  '/api/v1/members/{id}': {
    get: op('getMember', {
      summary: 'Get a member',
      tag: 'Account',
      params: [pathParam('id', 'Member id (mem_…)')],
      ok: { 200: { description: 'The member', schema: ref('Member') } },
    }),
    patch: op('updateMember', {
      summary: "Change a member's role",
      tag: 'Account',
      description:
        "Not above the changing key's role, nor of a member above it (403); the owner's role changes only by transfer-ownership (403).",
      params: [pathParam('id', 'Member id (mem_…)')],
      body: 'MemberUpdate',
      ok: { 200: { description: 'The member with the new role', schema: ref('Member') } },
    }),
    delete: op('removeMember', {
      summary: 'Remove a member',
      tag: 'Account',
      description:
        'Their sessions end at once and they can no longer sign in; API keys they made keep working until revoked. The owner cannot be removed (403).',
      params: [pathParam('id', 'Member id (mem_…)')],
      ok: { 200: { description: 'The member, removed', schema: ref('Member') } },
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
