import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { connectMongo } from '@licensing/runtime';
import { client, startStack, type Stack } from '../support/stack';
import { PAID_GRACE_MS } from '../../services/checkout/src/use-cases/completion';
import { EventLog } from '../support/events';
import { WebClient } from '../support/web-client';
import { ARTIFACTS, launchBrowser } from '../support/browser';
import { eventually } from '../support/eventually';

// Own stack: its hosted-page throttle case needs a second web component with CHECKOUT_REQUESTS_PER_MINUTE of
// its own.

let stack: Stack;
let events: EventLog;
let api: ReturnType<typeof client>;
let productId: string;
let browser: Browser;
let vendor: Server;
let vendorUrl: string;
const landed: string[] = [];

beforeAll(async () => {
  stack = await startStack({}, { CHECKOUT_REQUESTS_PER_MINUTE: '1000' });
  const acct = await stack.newAccount();
  await stack.admin.updateAccount({ id: acct.accountId, per_minute_limit: 100_000 });
  api = client(stack.url, acct.apiKey);
  events = await EventLog.open(stack.topology.natsUrl, stack.topology.stream);
  productId = (await api('POST', '/api/v1/products', { name: 'Pixel Forge', price: { amount: 4900, currency: 'EUR' } }))
    .body.id;
  // The vendor's own site, where buyers land after paying.
  vendor = createServer((req, res) => {
    landed.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/html' }).end('<title>Thanks</title><h1>Thanks for buying</h1>');
  });
  await new Promise<void>((r) => vendor.listen(0, '127.0.0.1', () => r()));
  vendorUrl = `http://127.0.0.1:${(vendor.address() as { port: number }).port}`;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  vendor?.close();
  await events?.close();
  await stack?.stop();
});

async function newSession(over: Record<string, unknown> = {}) {
  const res = await api('POST', '/api/v1/checkout', {
    product_id: productId,
    success_url: `${vendorUrl}/thanks?from=checkout`,
    cancel_url: `${vendorUrl}/cart`,
    ...over,
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; url: string };
}

const pathOf = (url: string) => new URL(url).pathname;

async function pay(web: WebClient, id: string, card = '4242 4242 4242 4242', email = 'buyer@example.com') {
  const page = await web.get(`/checkout/${id}`);
  return web.post(`/checkout/${id}/pay`, { _csrf: WebClient.csrf(page.html), email, card });
}

const licencesOfProduct = async () =>
  (await api('GET', `/api/v1/licenses?product_id=${productId}&limit=100`)).body.data as { key: string }[];

it('shows the product, price and test mode; paying issues the licence, records it and publishes checkout.completed', async () => {
  const s = await newSession({ customer_email: 'prefilled@example.com' });
  const web = new WebClient(stack.url, stack.topology);
  const page = await web.get(pathOf(s.url));
  expect(page.status).toBe(200);
  expect(page.html).toContain('Pixel Forge');
  expect(page.html).toContain('€49.00');
  expect(page.html).toContain('Test mode');
  expect(page.html).toContain('value="prefilled@example.com"');
  expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
  const paidRedirect = await web.post(`/checkout/${s.id}/pay`, {
    _csrf: WebClient.csrf(page.html),
    email: 'prefilled@example.com',
    card: '4242424242424242',
  });
  expect(paidRedirect.status).toBe(303);
  expect(paidRedirect.location).toBe(`/checkout/${s.id}`);
  // The receipt cookie: HttpOnly, only for this session's pages.
  expect(paidRedirect.headers.getSetCookie().find((c) => c.startsWith('lk_checkout_receipt='))).toMatch(
    new RegExp(`Path=/checkout/${s.id}; HttpOnly; SameSite=Strict`),
  );
  const paid = await web.get(`/checkout/${s.id}`);
  expect(paid.status).toBe(200);
  const key = /data-testid="license-key">([^<]+)</.exec(paid.html)![1];
  expect(paid.html).toContain(`url=${vendorUrl}/thanks?from=checkout&amp;session_id=${s.id}`);
  const session = (await api('GET', `/api/v1/checkout/${s.id}`)).body;
  expect(session).toMatchObject({ status: 'complete', license_key: key, customer_email: 'prefilled@example.com' });
  expect((await api('POST', '/api/v1/keys/validate', { key })).body).toMatchObject({
    valid: true,
    license: { product_id: productId, customer_email: 'prefilled@example.com' },
  });
  const event = await events.waitFor(
    (e) => e.type === 'checkout.completed' && (e.data as { checkout: { id: string } }).checkout.id === s.id,
  );
  expect(event.data).toMatchObject({
    license_key: key,
    customer_email: 'prefilled@example.com',
    checkout: { status: 'complete', amount: 4900, currency: 'EUR' },
  });
  // The payment's request id (given by the gateway) is on the events it caused, in both services.
  expect(event.request_id).toBe(paidRedirect.headers.get('x-request-id'));
  const issued = await events.waitFor(
    (e) => e.type === 'license.created' && (e.data as { license: { key: string } }).license.key === key,
  );
  expect(issued.request_id).toBe(paidRedirect.headers.get('x-request-id'));
  expect(event.data).toMatchObject({ checkout: { livemode: false } });
  // The browser that paid sees its key again; anyone else with the URL sees only "already paid".
  expect((await web.get(`/checkout/${s.id}`)).html).toContain(key);
  const stranger = await new WebClient(stack.url, stack.topology).get(`/checkout/${s.id}`);
  expect(stranger.status).toBe(409);
  expect(stranger.html).toContain('Already paid');
  expect(stranger.html).not.toContain(key);
  // A forged receipt cookie shows nothing either.
  const forger = new WebClient(stack.url, stack.topology);
  forger.cookies.set('lk_checkout_receipt', 'x'.repeat(43));
  expect((await forger.get(`/checkout/${s.id}`)).html).not.toContain(key);
});

it('CSRF tokens are checked on the server: a self-made cookie and field pair is refused', async () => {
  const s = await newSession();
  const web = new WebClient(stack.url, stack.topology);
  await web.get(`/checkout/${s.id}`);
  const token = 'a'.repeat(43);
  web.cookies.set('lk_checkout_csrf', token); // what a script can always do with a stateless double-submit
  const res = await web.post(`/checkout/${s.id}/pay`, {
    _csrf: token,
    email: 'script@example.com',
    card: '4242424242424242',
  });
  expect(res.status).toBe(403);
  expect((await api('GET', `/api/v1/checkout/${s.id}`)).body.status).toBe('open');
  // A real token of another session does not work here either.
  const other = await newSession();
  const otherWeb = new WebClient(stack.url, stack.topology);
  const otherCsrf = WebClient.csrf((await otherWeb.get(`/checkout/${other.id}`)).html);
  otherWeb.cookies.set('lk_checkout_csrf', otherCsrf);
  expect(
    (
      await otherWeb.post(`/checkout/${s.id}/pay`, {
        _csrf: otherCsrf,
        email: 'script@example.com',
        card: '4242424242424242',
      })
    ).status,
  ).toBe(403);
});

it('a declined card shows a clear message and leaves the session open', async () => {
  const s = await newSession();
  const res = await pay(new WebClient(stack.url, stack.topology), s.id, '4000 0000 0000 0002');
  expect(res.status).toBe(402);
  expect(res.html).toContain('Your card was declined.');
  expect((await api('GET', `/api/v1/checkout/${s.id}`)).body.status).toBe('open');
  expect((await pay(new WebClient(stack.url, stack.topology), s.id, '1234')).html).toContain(
    'Test mode: use the card 4242',
  );
});

it('ten concurrent payments of one session end with exactly one licence', async () => {
  const s = await newSession();
  const before = (await licencesOfProduct()).length;
  const tabs = await Promise.all(
    Array.from({ length: 10 }, async () => {
      const web = new WebClient(stack.url, stack.topology);
      const page = await web.get(`/checkout/${s.id}`);
      return { web, csrf: WebClient.csrf(page.html) };
    }),
  );
  const results = await Promise.all(
    tabs.map(({ web, csrf }) =>
      web.post(`/checkout/${s.id}/pay`, { _csrf: csrf, email: 'race@example.com', card: '4242424242424242' }),
    ),
  );
  // The tab whose payment was recorded is sent to its key; the others are told it is already paid.
  expect(results.map((r) => r.status).sort()).toEqual(expect.arrayContaining([303]));
  expect(results.every((r) => r.status === 303 || (r.status === 409 && r.html.includes('Already paid')))).toBe(true);
  const shown = await Promise.all(
    tabs.map(
      async ({ web }) => /data-testid="license-key">([^<]+)</.exec((await web.get(`/checkout/${s.id}`)).html)?.[1],
    ),
  );
  const keys = new Set(shown.filter(Boolean));
  expect(keys.size).toBe(1);
  expect(shown.filter(Boolean)).toHaveLength(results.filter((r) => r.status === 303).length);
  expect((await licencesOfProduct()).length).toBe(before + 1);
  expect((await api('GET', `/api/v1/checkout/${s.id}`)).body.license_key).toBe([...keys][0]);
});

it('a double click on Pay (the same form twice) leads to the same key, never a second licence', async () => {
  const s = await newSession();
  const before = (await licencesOfProduct()).length;
  const web = new WebClient(stack.url, stack.topology);
  const form = {
    _csrf: WebClient.csrf((await web.get(`/checkout/${s.id}`)).html),
    email: 'double@example.com',
    card: '4242424242424242',
  };
  const clicks = await Promise.all([web.post(`/checkout/${s.id}/pay`, form), web.post(`/checkout/${s.id}/pay`, form)]);
  expect(clicks.map((c) => c.status)).toEqual([303, 303]);
  expect((await web.get(`/checkout/${s.id}`)).html).toContain(
    (await api('GET', `/api/v1/checkout/${s.id}`)).body.license_key,
  );
  expect((await licencesOfProduct()).length).toBe(before + 1);
});

it('a session paid but not issued (a crash in between) is finished by the sweeper', async () => {
  const s = await newSession({ customer_email: 'crash@example.com' });
  const before = (await licencesOfProduct()).length;
  // The state a crash right after payment leaves behind, once the paying request would have given up.
  const db = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_checkout`);
  const paidAt = new Date(Date.now() - PAID_GRACE_MS);
  await db
    .collection('checkout_sessions')
    .updateOne({ _id: s.id as never }, { $set: { status: 'complete', payment_id: 'pay_test_x', paid_at: paidAt } });
  await db.close();
  await eventually(async () =>
    expect((await api('GET', `/api/v1/checkout/${s.id}`)).body.license_key).toMatch(/^[0-9A-Z]{5}(-[0-9A-Z]{5}){5}$/),
  );
  expect((await licencesOfProduct()).length).toBe(before + 1);
  await events.waitFor(
    (e) => e.type === 'checkout.completed' && (e.data as { checkout: { id: string } }).checkout.id === s.id,
  );
});

it('expired, unknown and forged requests get clear pages, never a stack trace; cancel goes back', async () => {
  const s = await newSession();
  const web = new WebClient(stack.url, stack.topology);
  const page = await web.get(`/checkout/${s.id}`);
  expect((await web.post(`/checkout/${s.id}/pay`, { email: 'a@example.com', card: '4242424242424242' })).status).toBe(
    403,
  );
  const cancel = await web.post(`/checkout/${s.id}/cancel`, { _csrf: WebClient.csrf(page.html) });
  expect(cancel.status).toBe(200);
  expect(cancel.html).toContain(`href="${vendorUrl}/cart"`);
  expect(cancel.html).toContain(`url=${vendorUrl}/cart`);
  await api('POST', `/api/v1/checkout/${s.id}/expire`);
  const expired = await web.get(`/checkout/${s.id}`);
  expect(expired.status).toBe(410);
  expect(expired.html).toContain('This checkout has expired');
  const late = await web.post(`/checkout/${s.id}/pay`, {
    _csrf: WebClient.csrf(page.html),
    email: 'a@example.com',
    card: '4242424242424242',
  });
  expect(late.status).toBe(410);
  expect((await api('GET', `/api/v1/checkout/${s.id}`)).body.status).toBe('expired');
  for (const path of ['/checkout/cs_01M82BCFGS21FWB5Z5A498AR3N', '/checkout/nonsense', '/checkout/%00']) {
    const res = await web.get(path);
    expect(res.status).toBe(404);
    expect(res.html).not.toMatch(/at .*\.(ts|js):\d+/);
  }
});

it('cancel_url is reached only from the page shown for the session: a bare link or a forged form redirects nowhere', async () => {
  // Anyone with an account can give any http(s) cancel_url; our address must not send strangers there.
  const s = await newSession({ cancel_url: 'https://elsewhere.example/login' });
  const stranger = new WebClient(stack.url, stack.topology);
  const link = await stranger.get(`/checkout/${s.id}/cancel`);
  expect(link.status).toBe(200);
  expect(link.location).toBeNull();
  expect(link.html).toContain('Checkout cancelled');
  expect(link.html).not.toContain('elsewhere.example');
  expect((await stranger.post(`/checkout/${s.id}/cancel`, {})).status).toBe(403);
  // A token of another session's page is not this session's.
  const other = await newSession();
  const otherPage = await stranger.get(`/checkout/${other.id}`);
  const forged = await stranger.post(`/checkout/${s.id}/cancel`, { _csrf: WebClient.csrf(otherPage.html) });
  expect(forged.status).toBe(403);
  expect(forged.html).not.toContain('elsewhere.example');
  // The buyer who was shown the page goes back.
  const buyer = new WebClient(stack.url, stack.topology);
  const shown = await buyer.get(`/checkout/${s.id}`);
  const back = await buyer.post(`/checkout/${s.id}/cancel`, { _csrf: WebClient.csrf(shown.html) });
  expect(back.status).toBe(200);
  expect(back.html).toContain('href="https://elsewhere.example/login"');
});

it('in a real browser: cancel goes back to cancel_url', async () => {
  const s = await newSession();
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(s.url);
  await page.getByRole('button', { name: 'Cancel and go back' }).click();
  await page.waitForURL(`${vendorUrl}/cart`);
  expect(landed).toContain('/cart');
  await context.close();
});

it('in a real browser: pay with the test card, see the key, land on the success URL, then validate the key', async () => {
  const s = await newSession();
  const context = await browser.newContext({ viewport: { width: 420, height: 860 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.goto(s.url);
  await page.getByLabel('E-mail for your licence').fill('browser@example.com');
  await page.getByLabel('Card number').fill('4242 4242 4242 4242');
  await page.screenshot({ path: join(ARTIFACTS, 'checkout-page.png'), fullPage: true });
  await page.getByRole('button', { name: /Pay/ }).click();
  const key = (await page.getByTestId('license-key').textContent())!.trim();
  await page.screenshot({ path: join(ARTIFACTS, 'checkout-paid.png'), fullPage: true });
  await page.getByRole('link', { name: 'Continue now' }).click();
  await page.waitForURL(`${vendorUrl}/thanks?from=checkout&session_id=${s.id}`);
  expect(landed).toContain(`/thanks?from=checkout&session_id=${s.id}`);
  expect((await api('POST', '/api/v1/keys/validate', { key })).body).toMatchObject({ valid: true, code: 'valid' });
  expect(errors).toEqual([]);
  await context.close();
});

it('the hosted page is rate limited per client address', async () => {
  const gw = await stack.extraGateway({
    CHECKOUT_REQUESTS_PER_MINUTE: '3',
    RATE_LIMIT_PREFIX: `${stack.topology.rateLimitPrefix}:page`,
  });
  const s = await newSession();
  const web = new WebClient(gw.url);
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) statuses.push((await web.get(`/checkout/${s.id}`)).status);
  expect(statuses).toEqual([200, 200, 200, 429]);
  const limited = await web.get(`/checkout/${s.id}`);
  expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(limited.html).toContain('Too many requests');
  expect((await web.get('/checkout/assets/checkout.css')).status).toBe(200); // assets are not counted
});
