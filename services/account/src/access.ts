import type { AccountServiceService } from '@licensing/proto';
import type { AccessPolicyOf } from '@licensing/runtime';

/**
 * Who may call what on the account service. The gateway authenticates API keys, reads a licence's
 * account for licence credentials, keeps Idempotency-Keys and serves /api/v1/api-keys; the web component's dashboard signs
 * people up and in and manages API keys; only the operator CLI creates accounts and changes plans and
 * limits. Of the services, only the notification service calls this one.
 */
/** Managing members: the gateway (/api/v1/members) and the dashboard. */
const MEMBER_METHODS = [
  'inviteMember',
  'listMembers',
  'getMember',
  'updateMember',
  'removeMember',
  'transferOwnership',
] as const;

export const accountAccess: AccessPolicyOf<typeof AccountServiceService> = {
  gateway: [
    'authenticate',
    // The plan and limits of a licence's account, for "Authorization: License <key>" (the licence service names the account).
    'getAccount',
    // Idempotency-Key on every POST that creates or sends something.
    'claimRequestKey',
    'renewRequestKey',
    'settleRequestKey',
    // POST/GET/DELETE /api/v1/api-keys, within the calling key's role (actor_role).
    'createApiKey',
    'listApiKeys',
    'revokeApiKey',
    // GET /api/v1/audit-events.
    'listAuditEvents',
    // /api/v1/members, within the calling key's role (actor_role).
    ...MEMBER_METHODS,
  ],
  operator: [
    'createAccount',
    'getAccount',
    'updateAccount',
    'createApiKey',
    'revokeApiKey',
    'getApiKey',
    'listApiKeys',
    'revokeAllApiKeys',
    // `npm run admin -- audit-export`.
    'listAuditEvents',
  ],
  // The vendor's name and support e-mail, for the purchase e-mail.
  notification: ['getAccount'],
  // The web component's dashboard: signing up and in, the session, API keys, the audit log and Settings.
  web: [
    'signUp',
    'confirmSignUp',
    'signIn',
    'getSession',
    'requestPasswordReset',
    'resetPassword',
    'changePassword',
    'listSessions',
    'endOwnSession',
    'endSession',
    'getAccount',
    'createApiKey',
    'revokeApiKey',
    'regenerateApiKey',
    'getApiKey',
    'listApiKeys',
    'revokeAllApiKeys',
    'listAuditEntries',
    'listAuditEvents',
    'setSupportEmail',
    'setRequireMfa',
    'acceptInvitation',
    // Two-factor sign-in: the sign-in's second step, enrolling and turning it off.
    'completeSignIn',
    'beginMfaEnrolment',
    'confirmMfaEnrolment',
    'disableMfa',
    'getMfaStatus',
    ...MEMBER_METHODS,
  ],
};
