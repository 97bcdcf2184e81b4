import type { RequestHandler, Router } from 'express';
import type { Email } from '@licensing/proto';
import { principalOf } from '../auth/principal';
import type { Clients } from '../backends/clients';
import { KEY_MAX } from '../request-shapes/operations';
import { pageShape, readBody, toPage, pageJson } from '../request-shapes/shapes';
import { registerRouteTable, withQuery, type RouteRow } from './route';

/** REST shape of one mail of the mail log. */
export const emailJson = (e: Email) => ({
  id: e.id,
  to: e.to,
  template: e.template,
  subject: e.subject || null,
  license_key: e.license_key,
  status: e.status,
  attempts: e.attempts,
  last_error: e.last_error || null,
  next_attempt_at: e.next_attempt_at || null,
  created_at: e.created_at,
  sent_at: e.sent_at || null,
});

/** GET /emails: the customer mail of the account (the notification service's log). */
function listEmails(clients: Clients): RequestHandler {
  return withQuery(pageShape, async (_req, res, query) => {
    const out = await clients.notifications.listEmails({
      account_id: principalOf(res).accountId,
      page: toPage(query, 'eml'),
    });
    res.json(pageJson(out.page!, out.data.map(emailJson)));
  });
}

/** POST /licenses/:key/email: a licence's e-mail sent again. */
function sendLicenseEmail(clients: Clients): RequestHandler {
  return async (req, res) => {
    readBody(req, {});
    const mail = await clients.notifications.sendLicenseEmail({
      account_id: principalOf(res).accountId,
      key: String(req.params.key).slice(0, KEY_MAX + 1),
      dedupe_key: '',
    });
    // Queued: the notification service sends it (and retries) on its own.
    res.status(202).json(emailJson(mail));
  };
}

/** The customer mail of the account, and a licence's e-mail sent again. */
export const emailRouteTable: readonly RouteRow<Clients>[] = [
  { method: 'get', path: '/emails', role: 'read_only', handler: listEmails },
  { method: 'post', path: '/licenses/:key/email', role: 'support', handler: sendLicenseEmail },
];

export function emailRoutes(router: Router, clients: Clients): void {
  registerRouteTable(router, emailRouteTable, clients);
}
