import { randomBytes } from 'node:crypto';
import { LicensedApp, LicensingError } from '@licensing/client';
import { checkedFetch } from '../support/sdk';
import { client, startStack, type Stack } from '../support/stack';
import { EventLog } from '../support/events';
import { SmtpInbox } from '../support/smtp-inbox';
import { WebClient } from '../support/web-client';
import { askForLink, nthMailTo, portalLinkIn, redeem, signInToPortal } from '../support/portal';

// Own stack: customer mail goes to this file's SMTP inbox, and its throttles are set per test address
// (TRUSTED_PROXIES).

// The customer portal and its API over plain HTTP against the real stack and a real SMTP server: the
// e-mail form's one answer, its throttles, CSRF, the session cookie, the one-time link, erasure, seat
// rescue and the activation 409's next_action. The browser flows are in portal-browser.test.ts.

let stack: Stack;
let inbox: SmtpInbox;
let events: EventLog;

beforeAll(async () => {
  inbox = await SmtpInbox.start();
  stack = await startStack(
    { customerMailUrl: inbox.url, mailRetryScheduleS: Array(40).fill('0.3').join(','), mailSendIntervalMs: 100 },
    // Each test acts from an address of its own (X-Forwarded-For from a trusted proxy), so throttles stay apart.
    { TRUSTED_PROXIES: '127.0.0.1', PORTAL_SIGNINS_PER_ADDRESS: '6', PORTAL_LOOKUPS_PER_ADDRESS_PER_MINUTE: '5' },
  );
  events = await EventLog.open(stack.topology.natsUrl, stack.topology.stream);
});

afterAll(async () => {
  await events?.close();
  await stack?.stop();
  await inbox?.stop();
});

const unique = (name: string) => `${name}-${randomBytes(4).toString('hex')}@example.com`;

/** A browser stand-in from its own client address. */
function visitor(): WebClient {
  const web = new WebClient(stack.url);
  web.headers['x-forwarded-for'] = `10.${[1, 2, 3].map(() => Math.floor(Math.random() * 250) + 1).join('.')}`;
  return web;
}

/** A vendor with a product of `maxActivations` seats. */
async function vendor(maxActivations = 2) {
  const { accountId, apiKey } = await stack.newAccount();
  const api = client(stack.url, apiKey);
  const product = await api('POST', '/api/v1/products', {
    name: 'Pixel Forge',
    policy: { max_activations: maxActivations },
  });
  expect(product.status).toBe(201);
  const issue = async (email: string) => {
    const out = await api('POST', '/api/v1/licenses', { product_id: product.body.id, customer_email: email });
    expect(out.status).toBe(201);
    return out.body.license_key as string;
  };
  const activate = (key: string, fingerprint: string) =>
    client(stack.url)(
      'POST',
      `/api/v1/licenses/${key}/activations`,
      { fingerprint, name: `Laptop ${fingerprint}` },
      {
        authorization: `License ${key}`,
      },
    );
  return { accountId, api, productId: product.body.id as string, issue, activate };
}

it('the e-mail form answers byte for byte the same for a customer and a stranger; only the customer gets a link', async () => {
  const v = await vendor();
  const other = await vendor();
  const customer = unique('customer');
  const othersCustomer = unique('elsewhere');
  const stranger = unique('stranger');
  await v.issue(customer);
  await other.issue(othersCustomer);
  const answers = await Promise.all(
    [customer, stranger, othersCustomer].map((email) => askForLink(visitor(), v.accountId, email)),
  );
  for (const a of answers) expect(a.status).toBe(200);
  expect(answers[1].html).toBe(answers[0].html);
  expect(answers[2].html).toBe(answers[0].html);
  expect(answers[0].html).toContain('If this address has licences with');
  expect(answers[0].html).not.toContain(customer);
  const mail = await nthMailTo(inbox, customer);
  expect(mail.headers.subject).toContain('Sign in');
  expect(portalLinkIn(mail).path).toMatch(new RegExp(`^/portal/${v.accountId}/link\\?token=`));
  // A later customer's mail has gone out: the earlier requests were handled, and sent nothing.
  const later = unique('later');
  await v.issue(later);
  await askForLink(visitor(), v.accountId, later);
  await nthMailTo(inbox, later);
  expect(inbox.to(stranger)).toHaveLength(0);
  expect(inbox.to(othersCustomer)).toHaveLength(0);
});

it("sign-in requests for a customer's address, however many, never lock the customer out; each client address is throttled: 429 with Retry-After", async () => {
  const v = await vendor();
  const email = unique('often');
  await v.issue(email);
  // Others ask for this customer's link again and again, from their own addresses: the same answer each time...
  for (let i = 0; i < 8; i++) expect((await askForLink(visitor(), v.accountId, email)).status).toBe(200);
  // ...and the customer, asking too, gets a link.
  expect((await askForLink(visitor(), v.accountId, email)).status).toBe(200);
  expect(portalLinkIn(await nthMailTo(inbox, email)).path).toContain(`/portal/${v.accountId}/link?token=`);

  const web = visitor();
  for (let i = 0; i < 6; i++) expect((await askForLink(web, v.accountId, unique('each'))).status).toBe(200);
  const fromAddress = await askForLink(web, v.accountId, unique('each'));
  expect(fromAddress.status).toBe(429);
  expect(Number(fromAddress.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(fromAddress.html).toContain('Too many sign-in requests');
});

it('portals of accounts this gateway does not know are looked up only so often per client address; one it knows answers from memory', async () => {
  const madeUp = () =>
    `acct_${randomBytes(13)
      .toString('hex')
      .toUpperCase()
      .replace(/[ILOU]/g, '0')
      .slice(0, 26)}`;
  const web = visitor();
  for (let i = 0; i < 5; i++) expect((await web.get(`/portal/${madeUp()}`)).status).toBe(404);
  const refused = await web.get(`/portal/${madeUp()}`);
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  // Another address is not held up by it...
  expect((await visitor().get(`/portal/${madeUp()}`)).status).toBe(404);
  // ...and a portal already known (its vendor remembered for a minute) still answers this address.
  const v = await vendor();
  expect((await visitor().get(`/portal/${v.accountId}`)).status).toBe(200);
  expect((await web.get(`/portal/${v.accountId}`)).status).toBe(200);
});

it('refuses forms without their CSRF token (403) and changes nothing', async () => {
  const v = await vendor();
  const email = unique('csrf');
  const key = await v.issue(email);
  expect((await v.activate(key, 'm1')).status).toBe(201);
  const web = visitor();
  await web.get(`/portal/${v.accountId}`);
  const asked = await portalLinkRequests();
  const noToken = await web.post(`/portal/${v.accountId}/sign-in`, { email, _csrf: 'made-up' });
  expect(noToken.status).toBe(403);
  // Refused before the notification service is asked: no sign-in request, so no mail can follow.
  expect(await portalLinkRequests()).toBe(asked);

  expect((await signInToPortal(web, inbox, v.accountId, email)).status).toBe(303);
  const page = await web.get(`/portal/${v.accountId}/licenses/${key}`);
  const activation = /data-activation="(act_[0-9A-Z]{26})"/.exec(page.html)![1];
  const forged = await web.post(`/portal/${v.accountId}/licenses/${key}/activations/${activation}/deactivate`, {
    _csrf: 'not-the-session-token',
  });
  expect(forged.status).toBe(403);
  const signOutForged = await web.post(`/portal/${v.accountId}/sign-out`, { _csrf: 'x' });
  expect(signOutForged.status).toBe(403);
  expect((await v.api('GET', `/api/v1/licenses/${key}/activations`)).body.data).toHaveLength(1);
});

/** Sign-in requests the notification service has handled so far (its gRPC metrics). */
const portalLinkRequests = async () => {
  const text = await (await fetch(stack.metricsUrls.notification)).text();
  return text
    .split('\n')
    .filter((l) => /^licensing_grpc_server_handled_total\{.*method="RequestPortalLink"/.test(l))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
};

it('the link signs in once: the session cookie is HttpOnly, SameSite=Lax, on the account path; the second use is a 400 page', async () => {
  const v = await vendor();
  const email = unique('once');
  const key = await v.issue(email);
  const web = visitor();
  await askForLink(web, v.accountId, email);
  const link = portalLinkIn(await nthMailTo(inbox, email));
  const linkPage = await web.get(link.path);
  expect(linkPage.status).toBe(200);
  expect(linkPage.html).toContain('<button type="submit">Sign in</button>'); // a GET uses nothing up
  const signedIn = await redeem(web, link);
  expect(signedIn.status).toBe(303);
  expect(signedIn.location).toBe(`/portal/${v.accountId}`);
  const cookie = signedIn.headers.getSetCookie().find((c) => c.startsWith('lk_portal='))!;
  expect(cookie).toMatch(/; HttpOnly/);
  expect(cookie).toMatch(/; SameSite=Lax/);
  expect(cookie).toContain(`; Path=/portal/${v.accountId};`);
  expect(cookie).not.toMatch(/; Secure/); // test mode: plain HTTP
  const maxAge = Number(/Max-Age=(\d+)/.exec(cookie)![1]);
  expect(maxAge).toBeGreaterThan(60);
  expect(maxAge).toBeLessThanOrEqual(7 * 24 * 3600);
  const home = await web.get(`/portal/${v.accountId}`);
  expect(home.html).toContain(key.slice(-5));
  expect(home.html).toContain(email);

  const again = await redeem(visitor(), link);
  expect(again.status).toBe(400);
  expect(again.html).toContain('used, expired or wrong');
  expect(again.headers.getSetCookie().some((c) => c.startsWith('lk_portal='))).toBe(false);
  // Signing out ends the session: the same cookie no longer opens the portal.
  const token = web.cookies.get('lk_portal')!;
  await web.post(`/portal/${v.accountId}/sign-out`, { _csrf: WebClient.csrf(home.html) });
  const replay = new WebClient(stack.url);
  replay.cookies.set('lk_portal', token);
  const ended = await replay.get(`/portal/${v.accountId}`);
  expect(ended.html).toContain('E-mail me a sign-in link');
  expect(ended.headers.getSetCookie().some((c) => /^lk_portal=;.*Max-Age=0/.test(c))).toBe(true); // cleared
  // A cookie not shaped like a session is no session, without a look-up, and is cleared too.
  replay.cookies.set('lk_portal', 'made-up');
  const madeUp = await replay.get(`/portal/${v.accountId}`);
  expect(madeUp.status).toBe(200);
  expect(madeUp.headers.getSetCookie().some((c) => /^lk_portal=;.*Max-Age=0/.test(c))).toBe(true);
});

it("a session of one account does not open another account's portal, and another e-mail's licence is a 404 page", async () => {
  const v = await vendor();
  const other = await vendor();
  const email = unique('cross');
  const key = await v.issue(email);
  const otherKey = await other.issue(email); // the same buyer at another vendor
  const neighbour = await v.issue(unique('neighbour'));
  const web = visitor();
  expect((await signInToPortal(web, inbox, v.accountId, email)).status).toBe(303);
  const token = web.cookies.get('lk_portal')!;
  const list = await web.get(`/portal/${v.accountId}`);
  expect(list.html).toContain(key);
  expect(list.html).not.toContain(otherKey);
  expect(list.html).not.toContain(neighbour);
  // The cookie's path keeps a browser from sending it elsewhere; sent anyway, the service refuses it.
  const elsewhere = new WebClient(stack.url);
  elsewhere.cookies.set('lk_portal', token);
  const otherPortal = await elsewhere.get(`/portal/${other.accountId}`);
  expect(otherPortal.html).toContain('E-mail me a sign-in link');
  expect(otherPortal.html).not.toContain(otherKey);
  expect((await elsewhere.get(`/portal/${other.accountId}/licenses/${otherKey}`)).status).toBe(303);
  for (const named of [neighbour, otherKey, 'NOT-A-KEY']) {
    const page = await web.get(`/portal/${v.accountId}/licenses/${named}`);
    expect(page.status).toBe(404);
    expect(page.html).toContain('Not found');
  }
  expect((await web.get(`/portal/acct_00000000000000000000000000`)).status).toBe(404);
  expect((await web.get('/portal/not-an-account')).status).toBe(404);
});

it('DELETE /api/v1/customers/{email} erases the e-mail everywhere; the licence keeps validating', async () => {
  const v = await vendor();
  const email = unique('Erase.Me');
  const key = await v.issue(email);
  await askForLink(visitor(), v.accountId, email);
  await nthMailTo(inbox, email.toLowerCase()); // the portal asks for the address lower-cased
  const bad = await v.api('DELETE', '/api/v1/customers/not-an-email');
  expect(bad.status).toBe(400);
  const out = await v.api('DELETE', `/api/v1/customers/${encodeURIComponent(email.toUpperCase())}`);
  expect(out.status).toBe(200);
  expect(out.body).toMatchObject({ object: 'customer_erasure', erased: expect.any(Number) });
  expect(out.body.placeholder).toMatch(/^erased-[0-9a-f]{16}@erased\.invalid$/);
  expect(out.body.erased).toBeGreaterThanOrEqual(2); // the licence and the mail
  const valid = await v.api('POST', '/api/v1/keys/validate', { key });
  expect(valid.body.valid).toBe(true);
  expect((await v.api('GET', `/api/v1/licenses?customer_email=${encodeURIComponent(email)}`)).body.data).toEqual([]);
  expect((await v.api('GET', `/api/v1/licenses/${key}`)).body.customer_email).toBe(out.body.placeholder);
  const mails = (await v.api('GET', '/api/v1/emails?limit=100')).body.data as { to: string }[];
  expect(mails.some((m) => m.to === out.body.placeholder)).toBe(true);
  expect(mails.some((m) => m.to.toLowerCase() === email.toLowerCase())).toBe(false);
  const erased = await events.waitFor(
    (e) => e.type === 'customer.erased' && (e.data as { placeholder: string }).placeholder === out.body.placeholder,
  );
  expect(JSON.stringify(erased)).not.toContain(email.toLowerCase());
  // Repeating it is harmless: nothing holds the e-mail any more.
  expect((await v.api('DELETE', `/api/v1/customers/${encodeURIComponent(email)}`)).status).toBe(200);
});

it('seat rescue: 202 without the address, then 429 with Retry-After within the hour; 409 for an erased customer; the full activation says free_a_seat', async () => {
  const v = await vendor(1);
  const email = unique('rescue');
  const key = await v.issue(email);
  expect((await v.activate(key, 'old-laptop')).status).toBe(201);
  const full = await v.activate(key, 'new-laptop');
  expect(full.status).toBe(409);
  expect(full.body).toMatchObject({ code: 'conflict', next_action: 'free_a_seat' });
  expect(full.body.detail).toMatch(/^activation_limit_reached/);
  const asLicense = client(stack.url);
  const auth = { authorization: `License ${key}` };
  const first = await asLicense('POST', `/api/v1/licenses/${key}/seat-rescue`, undefined, auth);
  expect(first.status).toBe(202);
  expect(first.body).toEqual({ object: 'seat_rescue', status: 'queued' });
  const second = await asLicense('POST', `/api/v1/licenses/${key}/seat-rescue`, undefined, auth);
  expect(second.status).toBe(429);
  expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(3000);
  const mail = await nthMailTo(inbox, email);
  expect(mail.headers.subject).toContain('Free a seat');
  // Another licence's key with this credential: not found, as if it did not exist.
  const otherKey = await v.issue(unique('other'));
  expect((await asLicense('POST', `/api/v1/licenses/${otherKey}/seat-rescue`, undefined, auth)).status).toBe(404);
  // A full key may ask for any licence of its account; an erased customer has no address to send to.
  const erasedEmail = unique('gone');
  const erasedKey = await v.issue(erasedEmail);
  expect((await v.api('DELETE', `/api/v1/customers/${encodeURIComponent(erasedEmail)}`)).status).toBe(200);
  const none = await v.api('POST', `/api/v1/licenses/${erasedKey}/seat-rescue`);
  expect(none.status).toBe(409);
  // Nor is the licence's mail sent again to the erased address's placeholder: 409, nothing queued.
  const again = await v.api('POST', `/api/v1/licenses/${erasedKey}/email`);
  expect(again.status).toBe(409);
  expect(again.body.detail).toContain('erased');
});

it("seat rescue with a validate-scope API key: 202, the owner's mail opens on that licence; 429 within the hour; another account's key is 404", async () => {
  const v = await vendor(1);
  const { secret } = await stack.admin.createApiKey({ account_id: v.accountId, scope: 'validate', name: 'in-app' });
  const asApp = client(stack.url, secret);
  const email = unique('validate-rescue');
  const key = await v.issue(email);
  const first = await asApp('POST', `/api/v1/licenses/${key}/seat-rescue`);
  expect(first.status).toBe(202);
  expect(first.body).toEqual({ object: 'seat_rescue', status: 'queued' });
  const mail = await nthMailTo(inbox, email);
  expect(mail.headers.subject).toContain('Free a seat');
  const web = visitor();
  expect((await redeem(web, portalLinkIn(mail))).status).toBe(303);
  expect((await web.get(`/portal/${v.accountId}/licenses/${key}`)).html).toContain(key);
  const again = await asApp('POST', `/api/v1/licenses/${key}/seat-rescue`);
  expect(again.status).toBe(429);
  expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(3000);
  // A validate key of another account: the licence does not exist for it, and nothing is sent.
  const other = await vendor();
  const elsewhere = await stack.admin.createApiKey({ account_id: other.accountId, scope: 'validate', name: 'in-app' });
  const foreign = await client(stack.url, elsewhere.secret)(
    'POST',
    `/api/v1/licenses/${await v.issue(unique('foreign'))}/seat-rescue`,
  );
  expect(foreign.status).toBe(404);
  expect(inbox.to(email)).toHaveLength(1);
});

it('LicensedApp.requestSeatRescue() against the running stack: when every seat is taken the owner gets the mail; a second is a 429 LicensingError', async () => {
  const v = await vendor(1);
  const email = unique('app-rescue');
  const key = await v.issue(email);
  const app = (fingerprint: string) =>
    new LicensedApp({ baseUrl: stack.url, licenseKey: key, fingerprint, fetch: checkedFetch, maxRetries: 0 });
  const holder = app('desk-1');
  await holder.activate();
  const newcomer = app('laptop-2');
  const full = await newcomer.activate().then(
    () => undefined,
    (e: unknown) => e as LicensingError,
  );
  expect(full).toBeInstanceOf(LicensingError);
  expect(full).toMatchObject({ status: 409, nextAction: 'free_a_seat' });
  await expect(newcomer.requestSeatRescue()).resolves.toEqual({ object: 'seat_rescue', status: 'queued' });
  const mail = await nthMailTo(inbox, email);
  expect(mail.headers.subject).toContain('Free a seat');
  expect(portalLinkIn(mail).path).toMatch(new RegExp(`^/portal/${v.accountId}/link\\?token=`));
  const limited = await newcomer.requestSeatRescue().then(
    () => undefined,
    (e: unknown) => e as LicensingError,
  );
  expect(limited).toBeInstanceOf(LicensingError);
  expect(limited).toMatchObject({ status: 429, code: 'rate_limited' });
  expect(limited!.retryAfterS).toBeGreaterThan(3000);
  expect(inbox.to(email)).toHaveLength(1);
  await holder.deactivate();
});

it("every portal page is sent with the dashboard's strict CSP and security headers, and carries no inline script or style", async () => {
  const v = await vendor();
  const email = unique('csp');
  const key = await v.issue(email);
  const dashboard = await new WebClient(stack.url).get('/dashboard/sign-in');
  const csp = dashboard.headers.get('content-security-policy')!;
  // Strict: nothing inline, nothing from elsewhere, no framing, forms post only to the gateway itself.
  for (const directive of [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ])
    expect(csp.split(/;\s*/)).toContain(directive);
  expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
  const web = visitor();
  const pages = [
    await web.get(`/portal/${v.accountId}`),
    await askForLink(web, v.accountId, email),
    await web.get(`/portal/${v.accountId}/link?token=${'x'.repeat(43)}`),
    await web.get('/portal/not-an-account'),
  ];
  await nthMailTo(inbox, email);
  expect((await redeem(web, portalLinkIn(inbox.to(email)[0]))).status).toBe(303);
  pages.push(
    await web.get(`/portal/${v.accountId}`),
    await web.get(`/portal/${v.accountId}/licenses/${key}`),
    await web.get(`/portal/${v.accountId}/licenses/NOT-A-KEY`),
    await web.get(`/portal/${v.accountId}/licenses/${key}/file`),
  );
  for (const page of pages) {
    expect([page.status, page.headers.get('content-security-policy')]).toEqual([page.status, csp]);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('cache-control')).toBe('no-store');
    // What the CSP would block, so a page relying on it would break: inline scripts, handlers and styles.
    expect(page.html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/i);
    expect(page.html).not.toMatch(/\son[a-z]+\s*=/i);
    expect(page.html).not.toMatch(/<style|\sstyle\s*=/i);
  }
  expect(pages.map((p) => p.status)).toEqual([200, 200, 200, 404, 200, 200, 404, 200]);
});

it("the dashboard's Settings shows the account's portal link (the request's origin without PUBLIC_BASE_URL)", async () => {
  const web = new WebClient(stack.url, stack.topology);
  await web.signUp(unique('vendor'));
  const settings = await web.get('/dashboard/settings');
  const accountId = /data-testid="account-id">(acct_[0-9A-Z]{26})</.exec(settings.html)![1];
  expect(settings.html).toContain(`data-testid="portal-url">${stack.url}/portal/${accountId}<`);
  expect((await new WebClient(stack.url).get(`/portal/${accountId}`)).status).toBe(200);
});

it('freeing machines: the policy limit is a 429 page saying when, 0 is a 409 page; the licence file downloads', async () => {
  const { accountId, apiKey } = await stack.newAccount();
  const api = client(stack.url, apiKey);
  const product = async (perMonth: number) =>
    (
      await api('POST', '/api/v1/products', {
        name: `Limit ${perMonth}`,
        policy: { max_activations: 3, customer_deactivations_per_30_days: perMonth },
      })
    ).body.id as string;
  const email = unique('limits');
  const issue = async (productId: string) =>
    (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: email })).body
      .license_key as string;
  const oncePerMonth = await issue(await product(1));
  const never = await issue(await product(0));
  const activate = async (key: string, fingerprint: string) =>
    (await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint })).body.id as string;
  const [a1, a2] = [await activate(oncePerMonth, 'm1'), await activate(oncePerMonth, 'm2')];
  const b1 = await activate(never, 'm3');
  const web = visitor();
  expect((await signInToPortal(web, inbox, accountId, email)).status).toBe(303);
  const page = await web.get(`/portal/${accountId}/licenses/${oncePerMonth}`);
  const csrf = WebClient.csrf(page.html);
  const free = (key: string, id: string) =>
    web.post(`/portal/${accountId}/licenses/${key}/activations/${id}/deactivate`, { _csrf: csrf });
  const first = await free(oncePerMonth, a1);
  expect(first.status).toBe(303);
  expect(first.location).toBe(`/portal/${accountId}/licenses/${oncePerMonth}?freed=1`);
  const second = await free(oncePerMonth, a2);
  expect(second.status).toBe(429);
  expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(24 * 3600);
  expect(second.html).toContain('role="alert"');
  // The service's message says when the next is allowed ("27 November 2026, 14:05 UTC"; the page's
  // own dates of activations are "2026-11-27 14:05", so this matches only the refusal's).
  expect(second.html).toMatch(/you can free another machine on \d{1,2} [A-Z][a-z]+ \d{4}, \d{2}:\d{2} UTC/);
  const neverPage = await web.get(`/portal/${accountId}/licenses/${never}`);
  expect(neverPage.html).not.toContain('Free this machine');
  expect((await free(never, b1)).status).toBe(409);
  expect((await api('GET', `/api/v1/licenses/${oncePerMonth}/activations`)).body.data).toHaveLength(1);
  expect((await api('GET', `/api/v1/licenses/${never}/activations`)).body.data).toHaveLength(1);
  // Another licence's activation id under this licence: 404, and it stays.
  expect((await free(oncePerMonth, b1)).status).toBe(404);
  expect((await api('GET', `/api/v1/licenses/${never}/activations`)).body.data).toHaveLength(1);

  const file = await web.get(`/portal/${accountId}/licenses/${oncePerMonth}/file`);
  expect(file.status).toBe(200);
  expect(file.headers.get('content-disposition')).toBe('attachment; filename="license.json"');
  expect(JSON.parse(file.html)).toMatchObject({ algorithm: 'Ed25519', kid: expect.any(String) });
});
