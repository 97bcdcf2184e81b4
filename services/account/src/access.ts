import type { AccountServiceService } from '@licensing/proto';
import type { AccessPolicyOf } from '@licensing/runtime';

/**
 * Who may call what on the account service. The gateway authenticates API keys
 * and serves the dashboard; only the operator CLI creates accounts and changes
 * plans and limits. No other service calls this one.
 */
export const accountAccess: AccessPolicyOf<typeof AccountServiceService> = {
  gateway: [
    'authenticate',
    'signUp',
    'confirmSignUp',
    'signIn',
    'getSession',
    'endSession',
    'createApiKey',
    'revokeApiKey',
    'regenerateApiKey',
    'getApiKey',
    'listApiKeys',
    'revokeAllApiKeys',
    'listAuditEntries',
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
  ],
};
