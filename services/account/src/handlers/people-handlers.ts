import type { Handlers } from '@licensing/runtime';
import type { AccountServiceService, SessionResponse } from '@licensing/proto';
import type { UserDoc } from '../store/models';
import { listAuditEntries } from '../use-cases/audit';
import type { PeopleDeps } from '../use-cases/deps';
import { endOwnSession, endSession, getSession, listSessions, signIn, type OpenedSession } from '../use-cases/sessions';
import { confirmSignUp, signUp } from '../use-cases/sign-up';
import { changePassword, requestPasswordReset, resetPassword } from '../use-cases/passwords';
import { toAccount } from './account-handlers';
import { beginMfaEnrolment, completeSignIn, confirmMfaEnrolment, disableMfa, mfaStatus } from '../use-cases/mfa';

type PeopleHandlers = Pick<
  Handlers<typeof AccountServiceService>,
  | 'signUp'
  | 'confirmSignUp'
  | 'signIn'
  | 'getSession'
  | 'endSession'
  | 'listAuditEntries'
  | 'requestPasswordReset'
  | 'resetPassword'
  | 'changePassword'
  | 'listSessions'
  | 'endOwnSession'
  | 'completeSignIn'
  | 'beginMfaEnrolment'
  | 'confirmMfaEnrolment'
  | 'disableMfa'
  | 'getMfaStatus'
>;

const userJson = (u: UserDoc) => ({
  id: u._id,
  account_id: u.account_id,
  email: u.email,
  created_at: u.created_at.toISOString(),
});

export const toSession = (s: OpenedSession): SessionResponse => ({
  token: s.token,
  csrf_token: s.csrfToken,
  expires_at: s.expiresAt.toISOString(),
  user: userJson(s.user),
  account: toAccount(s.account),
  role: s.role,
  code_required: s.stage === 'code',
  must_enrol_mfa: s.mustEnrolMfa === true,
});

// Proto to use case and back; the rules live in use-cases/ and domain/.
export function peopleHandlers(deps: PeopleDeps): PeopleHandlers {
  return {
    async signUp(req) {
      await signUp(deps, req);
      return {};
    },
    confirmSignUp: async (req) => toSession(await confirmSignUp(deps, req.token)),
    signIn: async (req) => toSession(await signIn(deps, req)),
    getSession: async (req) => toSession(await getSession(deps, req.token)),
    async endSession(req) {
      await endSession(deps, req.token);
      return {};
    },
    listAuditEntries: async (req) => ({ data: await listAuditEntries(deps, req.account_id, req.limit) }),
    async requestPasswordReset(req) {
      await requestPasswordReset(deps, req);
      return {};
    },
    resetPassword: async (req) => toSession(await resetPassword(deps, req)),
    changePassword: async (req) => ({ ended_sessions: await changePassword(deps, req) }),
    listSessions: async (req) => ({ data: await listSessions(deps, req.token) }),
    async endOwnSession(req) {
      await endOwnSession(deps, req);
      return {};
    },
    completeSignIn: async (req) => toSession(await completeSignIn(deps, req)),
    beginMfaEnrolment: (req) => beginMfaEnrolment(deps, req),
    confirmMfaEnrolment: (req) => confirmMfaEnrolment(deps, req),
    async disableMfa(req) {
      await disableMfa(deps, req);
      return {};
    },
    getMfaStatus: (req) => mfaStatus(deps, req),
  };
}
