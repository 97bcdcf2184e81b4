import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { client, startStack, type Stack } from '../support/stack';
import { ARTIFACTS, launchBrowser } from '../support/browser';
import { signupToken, waitForMail } from '../support/mailbox';
import { eventually } from '../support/eventually';

// The whole dashboard journey in a real headless Chromium.
// Own stack: sign-ups through the dashboard are throttled per address, and the walk signs up several times; a
// stack shared with other files would spend their allowance.
let stack: Stack;
let browser: Browser;

beforeAll(async () => {
  stack = await startStack();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

const apiStatus = async (key: string) => (await client(stack.url, key)('GET', '/api/v1/products')).status;

/** Refused within a second (the revocation promise). */
const refusedWithinASecond = (key: string) =>
  eventually(async () => expect(await apiStatus(key)).toBe(401), { timeoutMs: 1000 });

async function newKeyOnPage(page: Page): Promise<string> {
  const secret = (await page.getByTestId('new-key').textContent())!.trim();
  expect(secret).toMatch(/^lk_(full|val)_[0-9A-Za-z]{49}$/);
  return secret;
}

it('sign up, sign in, generate a key and use it, regenerate, revoke, sign out', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  const email = `owner-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'a long and happy passphrase';

  // Sign up: "check your inbox", then the e-mailed link creates the account and lands on Settings, signed in.
  await page.goto(`${stack.url}/dashboard/signup`);
  await page.getByLabel('Company or product name').fill('Photon Apps');
  await page.getByLabel('Your e-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL('**/dashboard/signup/sent');
  await expect(page.getByRole('heading', { name: 'Check your inbox' }).isVisible()).resolves.toBe(true);
  await page.goto(
    `${stack.url}/dashboard/signup/confirm?token=${signupToken(await waitForMail(stack.topology, email))}`,
  );
  await page.getByRole('button', { name: 'Create my account' }).click();
  await page.waitForURL('**/dashboard/settings');
  await expect(page.getByRole('heading', { name: 'Settings' }).isVisible()).resolves.toBe(true);

  // Sign out, then sign in again.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL('**/dashboard/signin');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/dashboard$/);
  await expect(page.getByRole('img', { name: /Validations per hour/ }).isVisible()).resolves.toBe(true);
  await page.screenshot({ path: join(ARTIFACTS, 'dashboard-overview.png'), fullPage: true });
  await page.getByRole('link', { name: 'Settings' }).click();

  // Generate a key: shown once, with a copy button; it works against the API.
  await page.getByLabel('Name').fill('production server');
  await page.getByLabel('Scope').selectOption('full');
  await page.getByRole('button', { name: 'Generate API key' }).click();
  await expect(page.getByText('you will not see this again').isVisible()).resolves.toBe(true);
  const first = await newKeyOnPage(page);
  await page.screenshot({ path: join(ARTIFACTS, 'dashboard-settings-new-key.png'), fullPage: true });
  expect(await apiStatus(first)).toBe(200);
  await page.goto(`${stack.url}/dashboard/settings`);
  expect(await page.getByTestId('new-key').count()).toBe(0); // never shown again

  // Regenerate: confirm, the old key is refused, the new one works.
  const row = page.locator('tr', { hasText: 'production server' }).filter({ hasText: 'active' });
  await row.getByRole('link', { name: 'Regenerate' }).click();
  await page.getByRole('button', { name: 'Regenerate key' }).click();
  const second = await newKeyOnPage(page);
  expect(second).not.toBe(first);
  await refusedWithinASecond(first);
  expect(await apiStatus(second)).toBe(200);

  // Revoke: confirm, and it stops working within a second.
  await page.goto(`${stack.url}/dashboard/settings`);
  await page
    .locator('tr', { hasText: 'production server' })
    .filter({ hasText: 'active' })
    .getByRole('link', { name: 'Revoke' })
    .click();
  await page.getByRole('button', { name: 'Revoke key' }).click();
  await expect(page.getByText('Requests with it now get 401').isVisible()).resolves.toBe(true);
  await refusedWithinASecond(second);
  await expect(page.getByText(`${email} revoked`).first().isVisible()).resolves.toBe(true);
  await page.screenshot({ path: join(ARTIFACTS, 'dashboard-settings.png'), fullPage: true });

  // Sign out: the dashboard asks for sign-in again.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL('**/dashboard/signin');
  await page.goto(`${stack.url}/dashboard/settings`);
  expect(page.url()).toMatch(/\/dashboard\/signin$/);
  expect(errors).toEqual([]); // no script errors, no CSP violations
  await context.close();
});

it('the Settings page is usable on a phone and by keyboard', async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
  const page = await context.newPage();
  const email = `phone-${randomBytes(4).toString('hex')}@example.com`;
  await page.goto(`${stack.url}/dashboard/signup`);
  // Keyboard only: labels are focusable fields in order, Enter submits.
  await page.getByLabel('Company or product name').focus();
  await page.keyboard.type('Pocket Tools');
  await page.keyboard.press('Tab');
  await page.keyboard.type(email);
  await page.keyboard.press('Tab');
  await page.keyboard.type('thumbs are typing this');
  await page.keyboard.press('Enter');
  await page.waitForURL('**/dashboard/signup/sent');
  await page.goto(
    `${stack.url}/dashboard/signup/confirm?token=${signupToken(await waitForMail(stack.topology, email))}`,
  );
  await page.getByRole('button', { name: 'Create my account' }).focus();
  await page.keyboard.press('Enter'); // by keyboard
  await page.waitForURL('**/dashboard/settings');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(1); // nothing wider than the screen
  await page.screenshot({ path: join(ARTIFACTS, 'dashboard-settings-phone.png'), fullPage: true });
  await context.close();
});
