import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS, launchBrowser } from '../support/browser';
import { nthMailTo, portalLinkIn, textOf } from '../support/portal';
import { SmtpInbox } from '../support/smtp-inbox';
import { client, startStack, TestClock, type Stack } from '../support/stack';
import { eventually } from '../support/eventually';

// The customer's whole journey, in Chromium against a real SMTP server: a buyer pays on the hosted test-mode
// checkout page and finds the key in the mail within seconds; opens the portal from the mail's link and
// sees that licence; frees a machine there; and later, on another browser, recovers the key by entering
// their e-mail on the portal.
// Own stack: its clock is moved on by a day (TestClock), and customer mail goes to this file's SMTP inbox.

let stack: Stack;
let inbox: SmtpInbox;
let browser: Browser;
/** "Later" is a clock moved on by a day: sign-in requests of one address are one mail per minute. */
const clock = new TestClock();

beforeAll(async () => {
  inbox = await SmtpInbox.start();
  stack = await startStack(
    { customerMailUrl: inbox.url, mailRetryScheduleS: Array(40).fill('0.3').join(','), mailSendIntervalMs: 100 },
    { CHECKOUT_REQUESTS_PER_MINUTE: '1000' },
    clock,
  );
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await inbox?.stop();
});

const shot = (page: Page, name: string) =>
  page.screenshot({ path: join(ARTIFACTS, `portal-journey-${name}.png`), fullPage: true });

it('pay, get the key by mail within seconds, open the portal from the mail, free a machine, recover the key later', async () => {
  const created = await stack.admin.createAccount({ name: 'Photon Apps', plan: 'enterprise' });
  const accountId = created.account!.id;
  const api = client(stack.url, created.secret);
  const product = await api('POST', '/api/v1/products', {
    name: 'Pixel Forge',
    price: { amount: 4900, currency: 'EUR' },
    policy: { max_activations: 2 },
  });
  const session = await api('POST', '/api/v1/checkout', {
    product_id: product.body.id,
    success_url: 'https://vendor.example/thanks',
  });
  expect(session.status).toBe(201);
  const buyer = 'journey.buyer@example.com';

  // 1. Pay on the hosted test-mode page.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.setDefaultTimeout(8000);
  await page.goto(session.body.url);
  await page.getByLabel('E-mail for your licence').fill(buyer);
  await page.getByLabel('Card number').fill('4242 4242 4242 4242');
  await page.getByRole('button', { name: /Pay/ }).click();
  const shownKey = (await page.getByTestId('license-key').textContent())!.trim();
  const paidAt = Date.now();

  // 2. The key is in the mail within seconds, with the portal link.
  const purchase = await eventually(
    () => {
      const mail = inbox.to(buyer)[0];
      expect(mail).toBeDefined();
      return mail;
    },
    { timeoutMs: 10_000, intervalMs: 50 },
  );
  expect(Date.now() - paidAt).toBeLessThan(10_000);
  const text = textOf(purchase);
  expect(text).toContain(shownKey);
  const portalUrl = new RegExp(`${stack.url.replace(/[.]/g, '\\.')}/portal/${accountId}\\b`).exec(text)?.[0];
  expect(portalUrl).toBe(`${stack.url}/portal/${accountId}`);

  // The app takes both seats on two machines.
  const app = (fingerprint: string, name: string) =>
    client(stack.url)(
      'POST',
      `/api/v1/licenses/${shownKey}/activations`,
      { fingerprint, name },
      {
        authorization: `License ${shownKey}`,
      },
    );
  expect((await app('fp-old', 'Old laptop')).status).toBe(201);
  expect((await app('fp-work', 'Work PC')).status).toBe(201);
  expect((await app('fp-new', 'New laptop')).status).toBe(409);

  // 3. Open the portal from the mail's link, ask for a sign-in link, open it: that licence is there.
  await page.goto(portalUrl!);
  await shot(page, 'sign-in');
  await page.getByLabel('Your e-mail address').fill(buyer);
  await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
  await page.getByRole('heading', { name: 'Check your inbox' }).waitFor();
  const signIn = portalLinkIn(await nthMailTo(inbox, buyer, 2));
  await page.goto(`${stack.url}${signIn.path}`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Your licences' }).waitFor();
  await expect(page.getByText(shownKey.slice(-5)).first().isVisible()).resolves.toBe(true);
  await shot(page, 'licences');

  // 4. Free the old laptop: the new one takes its seat.
  await page.getByRole('link', { name: 'Pixel Forge', exact: true }).click();
  await page.getByRole('button', { name: 'Free this machine: Old laptop' }).click();
  await page.getByText('The machine is freed').waitFor();
  await shot(page, 'freed');
  expect((await app('fp-new', 'New laptop')).status).toBe(201);
  expect(errors).toEqual([]);
  await context.close();

  // 5. A day later, on another device with nothing saved: the key back by entering the e-mail.
  clock.advance(24 * 3600_000);
  const later = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
  const phone = await later.newPage();
  phone.setDefaultTimeout(8000);
  await phone.goto(`${stack.url}/portal/${accountId}`);
  await phone.getByLabel('Your e-mail address').fill(buyer);
  await phone.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
  await phone.getByRole('heading', { name: 'Check your inbox' }).waitFor();
  const recovery = portalLinkIn(await nthMailTo(inbox, buyer, 3));
  await phone.goto(`${stack.url}${recovery.path}`);
  await phone.getByRole('button', { name: 'Sign in' }).click();
  await phone.getByText('Reveal key').first().click();
  await expect(phone.getByTestId('key-0').textContent()).resolves.toBe(shownKey);
  await shot(phone, 'recovered');
  await later.close();
}, 90_000);
