import type { Handlers } from '@licensing/runtime';
import type { Email, NotificationServiceService, PortalSession } from '@licensing/proto';
import type { EmailDoc } from '../store/emails';
import type { PortalSessionDoc } from '../store/portal';
import type { NotificationDeps } from '../use-cases/deps';
import { listEmails, sendLicenseEmail } from '../use-cases/emails';
import {
  endPortalSession,
  eraseCustomer,
  getPortalSession,
  redeemPortalLink,
  requestPortalLink,
  requestSeatRescue,
} from '../use-cases/portal';

const toEmail = (d: EmailDoc): Email => ({
  id: d._id,
  to: d.to,
  template: d.template,
  subject: d.subject,
  status: d.status,
  attempts: d.attempts,
  last_error: d.last_error ?? '',
  next_attempt_at: d.next_attempt_at ? d.next_attempt_at.toISOString() : '',
  created_at: d.created_at.toISOString(),
  sent_at: d.sent_at ? d.sent_at.toISOString() : '',
  license_key: d.license_key,
});

/** The session's token only when it is opened (RedeemPortalLink); it is stored as a digest. */
const toSession = (d: PortalSessionDoc, token = ''): PortalSession => ({
  token,
  csrf_token: d.csrf_token,
  email: d.email,
  expires_at: d.expires_at.toISOString(),
  license_key: d.license_key,
  account_id: d.account_id,
});

// Proto to use case and back; the rules live in use-cases/ and domain/.
export function emailHandlers(deps: NotificationDeps): Handlers<typeof NotificationServiceService> {
  return {
    async listEmails(req) {
      const { items, page } = await listEmails(deps, req.account_id, req.page);
      return { data: items.map(toEmail), page };
    },
    sendLicenseEmail: async (req) => toEmail(await sendLicenseEmail(deps, req.account_id, req.key, req.dedupe_key)),
    async requestPortalLink(req) {
      await requestPortalLink(deps, req.account_id, req.email);
      return {};
    },
    requestSeatRescue: async (req) => toEmail(await requestSeatRescue(deps, req.account_id, req.key)),
    async redeemPortalLink(req) {
      const { token, session } = await redeemPortalLink(deps, req.account_id, req.token);
      return toSession(session, token);
    },
    getPortalSession: async (req) => toSession(await getPortalSession(deps, req.account_id, req.token)),
    async endPortalSession(req) {
      await endPortalSession(deps, req.account_id, req.token);
      return {};
    },
    eraseCustomer: async (req) => ({
      erased: await eraseCustomer(deps, req.account_id, req.email, req.placeholder),
    }),
  };
}
