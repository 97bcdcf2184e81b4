// Who may do what in an account: the members' roles and the API keys' roles, one source for the
// gateway (each operation's needed role, refused with 403 forbidden), the account service (what a
// key or an invitation may be given) and docs/api.md ("Roles"). Each role may do everything the
// roles below it may:
//   owner      everything, including the plan, ownership and closing the account (one per account)
//   admin      everything but the plan, ownership and the owner's membership; members and API keys
//   developer  products, policies, signing keys, licences, webhooks, checkout, subscriptions,
//              imports, exports; not members, not erasure
//   support    reads; on licences: suspend, reinstate, renew, reroll, free machines, resend mail,
//              seat rescue
//   read_only  reads everything but secrets
// An API key's `validate` role is an app's key: the app routes only (validation, activations,
// heartbeats, licence files), whatever they need.

/** The roles of people in an account, highest first. */
export const MEMBER_ROLES = ['owner', 'admin', 'developer', 'support', 'read_only'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

/** The roles a member may be given (an invitation, a change): every role but the owner's, which is handed over. */
export const GIVEN_MEMBER_ROLES = ['admin', 'developer', 'support', 'read_only'] as const;

/** Where a member is: invited (the mailed link not yet used), active, or removed (kept for the audit log). */
export const MEMBER_STATUSES = ['invited', 'active', 'removed'] as const;
export type MemberStatus = (typeof MEMBER_STATUSES)[number];

/** The roles an API key may have: a member's role below owner, or `validate` (an app's key). */
export const API_KEY_ROLES = ['admin', 'developer', 'support', 'read_only', 'validate'] as const;
export type ApiKeyRole = (typeof API_KEY_ROLES)[number];

/** What an operation of the API needs: the lowest member role allowed to call it. */
export type OperationRole = MemberRole;

const RANK: Record<MemberRole | ApiKeyRole, number> = {
  owner: 5,
  admin: 4,
  developer: 3,
  support: 2,
  read_only: 1,
  validate: 0,
};

export const isMemberRole = (role: string): role is MemberRole => (MEMBER_ROLES as readonly string[]).includes(role);
export const isApiKeyRole = (role: string): role is ApiKeyRole => (API_KEY_ROLES as readonly string[]).includes(role);

/** Whether a holder of `role` may call an operation that needs `needed` (an unknown role may call nothing). */
export function roleCovers(role: string, needed: OperationRole): boolean {
  return (isMemberRole(role) || isApiKeyRole(role)) && RANK[role] >= RANK[needed];
}

/** Whether `granter` may give `role` to a key or a member: never a role above its own. */
export function mayGrant(granter: string, role: string): boolean {
  return (isMemberRole(granter) || isApiKeyRole(granter)) && (isMemberRole(role) || isApiKeyRole(role))
    ? RANK[role] <= RANK[granter]
    : false;
}

/**
 * The role of an API key made before keys had roles, from its scope: a full key is an `admin` key,
 * a validate-scope key a `validate` key (it keeps every power it had).
 */
export function roleOfScope(scope: string): ApiKeyRole {
  return scope === 'validate' ? 'validate' : 'admin';
}
