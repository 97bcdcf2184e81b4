import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { base32Decode, stepAt, totpCode } from '../../services/account/src/domain/totp';
import { apiKeyInBrowser, createProductInBrowser, signUpInBrowser } from '../support/dashboard-browser';
import { client, startStack, type Stack } from '../support/stack';
import { ARTIFACTS, launchBrowser } from '../support/browser';
import { signupToken, waitForMail } from '../support/mailbox';
import { eventually } from '../support/eventually';

// The whole dashboard journey in a real headless Chromium, and a team's (members, roles, two-factor sign-in).
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

// A product's Releases page in a real browser: a draft made on the page, a file uploaded through it (the
// page asks the dashboard for an upload grant and sends the file to the gateway with it) with its
// progress shown up to 100%, then listed with its size and hash, published; and a licence's page lists
// the release it may download.
it("a product's releases: a draft, a file uploaded with its progress, published, and offered to a licence", async () => {
  const vendor = await signUpInBrowser(browser, stack, { company: 'Release Apps' });
  contexts.push(vendor.context);
  const page = vendor.page;
  const api = client(stack.url, await apiKeyInBrowser(page, stack.url));
  const productId = await createProductInBrowser(page, stack.url, { name: 'Shipping Pro' });
  await page.getByRole('link', { name: 'Releases' }).click();
  await page.waitForURL(`**/dashboard/products/${productId}/releases`);
  await page.getByLabel('Version').fill('1.0.0');
  await page.getByLabel('Release notes').fill('The first one.');
  await page.getByRole('button', { name: 'Create draft' }).click();
  await page.waitForURL('**/releases?created=1');

  // Every value the progress bar takes, reported from the page (the page loads again once done).
  const progress: number[] = [];
  await page.exposeFunction('reportProgress', (v: number) => progress.push(v));
  await page.evaluate(() => {
    const bar = document.querySelector('progress')!;
    const report = (window as unknown as { reportProgress: (v: number) => void }).reportProgress;
    new MutationObserver(() => report(bar.value)).observe(bar, { attributes: true, attributeFilter: ['value'] });
  });
  const bytes = Buffer.alloc(2 * 1024 * 1024, 7);
  const row = page.locator('tr[data-upload-for]');
  await row
    .getByLabel('File', { exact: true })
    .setInputFiles({ name: 'shipping-1.0.0.zip', mimeType: 'application/zip', buffer: bytes });
  await row.getByLabel('Platform').selectOption('linux');
  await row.getByLabel('Architecture').selectOption('x86_64');
  await row.getByRole('button', { name: 'Upload file' }).click();
  const file = page.locator('tr[data-release-version="1.0.0"] li[data-filename="shipping-1.0.0.zip"]');
  await file.waitFor();
  expect(Math.max(...progress)).toBe(100);
  await expect(file.textContent()).resolves.toContain('linux/x86_64, 2.0 MiB');
  await expect(file.textContent()).resolves.toContain('0 downloads');
  await vendor.shot('dashboard-releases');
  await page.getByRole('button', { name: 'Publish' }).click();
  await expect(page.getByText('Published 1.0.0.').isVisible()).resolves.toBe(true);
  expect((await api('GET', `/api/v1/products/${productId}/releases`)).body.data).toMatchObject([
    { version: '1.0.0', status: 'published', artifacts: [{ filename: 'shipping-1.0.0.zip', size: bytes.length }] },
  ]);

  const issued = await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'buyer@example.com' });
  await page.goto(`${stack.url}/dashboard/licenses/${issued.body.license_key}`);
  const downloads = page.locator('section[aria-labelledby="downloads-title"]');
  await expect(downloads.locator('tr[data-release-version="1.0.0"]').textContent()).resolves.toContain(
    'shipping-1.0.0.zip',
  );
  expect(vendor.errors).toEqual([]); // no script errors, no CSP violations
});

// A vendor's team, end to end: the owner signs up and invites a developer and a support member, who
// each join from their mail; support frees a customer's machine but is refused creating a product; the
// owner requires two-factor sign-in; the developer is sent to enrol at their next sign-in, enrols with a
// code computed here (the authenticator app), and from then on cannot sign in without a code; a recovery
// code works once; a forgotten password is reset by mail and still asks for the code; the owner's Audit
// page shows each of these with who did it.
const TEAM_PASSWORD = 'a long and happy passphrase';
/** Browser contexts of the team's members (the owner's is made by signUpInBrowser), closed after the file. */
const contexts: BrowserContext[] = [];
afterAll(async () => {
  await Promise.all(contexts.map((c) => c.close()));
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(8000);
  return page;
}

/** The link of the newest mail to an address, once it has arrived (the nth mail to it). */
async function linkIn(email: string, nth: number, path: string): Promise<string> {
  const { text } = await waitForMail(stack.topology, email, nth);
  const found = new RegExp(`https?://[^\\s]+${path.replace(/\//g, '\\/')}\\?token=[A-Za-z0-9_-]+`).exec(text);
  if (!found) throw new Error(`no ${path} link in the mail to ${email}: ${text}`);
  return found[0];
}

async function invite(owner: Page, email: string, role: string) {
  await owner.goto(`${stack.url}/dashboard/members`);
  await owner.getByLabel('E-mail').fill(email);
  await owner.getByLabel('Role', { exact: true }).selectOption(role);
  await owner.getByRole('button', { name: 'Invite' }).click();
  await expect(owner.getByText(email).first().isVisible()).resolves.toBe(true);
}

/** The invited person opens the mailed link in a browser of their own and joins. */
async function joinTeam(email: string, name: string): Promise<Page> {
  const page = await newPage();
  await page.goto(await linkIn(email, 1, '/dashboard/invitations/accept'));
  await page.getByLabel('Your name').fill(name);
  await page.getByLabel('Password').fill(TEAM_PASSWORD);
  await page.getByRole('button', { name: 'Join' }).click();
  await page.waitForURL(/\/dashboard(\/|$)/);
  return page;
}

async function signIn(page: Page, email: string, password = TEAM_PASSWORD) {
  await page.goto(`${stack.url}/dashboard/signin`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function signOut(page: Page) {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL('**/dashboard/signin');
}

async function giveCode(page: Page, code: string) {
  await page.getByLabel('The 6-digit code from your authenticator app').fill(code);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

it('a team: invitations, roles, required two-factor sign-in, recovery codes, a password reset, and the audit log', async () => {
  const owner = await signUpInBrowser(browser, stack, { company: 'Team Apps' });
  contexts.push(owner.context);
  const o = owner.page;
  const api = client(stack.url, await apiKeyInBrowser(o, stack.url));
  const productId = await createProductInBrowser(o, stack.url, { name: 'Team Pro', maxActivations: '2' });
  const issued = await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'buyer@example.com' });
  expect(issued).toMatchObject({ status: 201 });
  const key = issued.body.license_key as string;
  const activated = await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'buyer-laptop' });
  expect(activated).toMatchObject({ status: 201 });
  const machine = activated.body;

  const suffix = Math.random().toString(36).slice(2, 8);
  const devEmail = `dev-${suffix}@example.com`;
  const supportEmail = `support-${suffix}@example.com`;
  await invite(o, devEmail, 'developer');
  await invite(o, supportEmail, 'support');
  const dev = await joinTeam(devEmail, 'Dana Developer');
  const support = await joinTeam(supportEmail, 'Sam Support');

  // Support frees the customer's machine, and is refused creating a product (on the server, whatever the page).
  await support.goto(`${stack.url}/dashboard/licenses/${key}`);
  await support.locator(`tr[data-activation-id="${machine.id}"]`).getByRole('link', { name: 'Deactivate' }).click();
  await support.getByRole('button', { name: 'Deactivate machine' }).click();
  await expect(support.getByText('Deactivated buyer-laptop').isVisible()).resolves.toBe(true);
  expect((await api('GET', `/api/v1/licenses/${key}/activations`)).body.data).toEqual([]);
  await support.goto(`${stack.url}/dashboard/products`);
  const csrf = await support.locator('input[name="_csrf"]').first().inputValue();
  const refused = await support.request.post(`${stack.url}/dashboard/products`, {
    form: { _csrf: csrf, name: 'Not allowed' },
    maxRedirects: 0,
  });
  expect(refused.status()).toBe(403);
  expect(await refused.text()).toContain('Your role (support) cannot do this');
  expect((await api('GET', '/api/v1/products')).body.data.map((p: { name: string }) => p.name)).toEqual(['Team Pro']);

  // The owner requires two-factor sign-in.
  await o.goto(`${stack.url}/dashboard/settings`);
  await o.getByLabel('Require two-factor sign-in for every member').check();
  await o.locator('form[action="/dashboard/settings/require-mfa"]').getByRole('button', { name: 'Save' }).click();
  await expect(o.getByText('Two-factor sign-in is now required').isVisible()).resolves.toBe(true);

  // The developer's next sign-in is sent to enrolment, and nowhere else.
  await signOut(dev);
  await signIn(dev, devEmail);
  await dev.waitForURL('**/dashboard/settings/mfa');
  await dev.goto(`${stack.url}/dashboard/products`);
  await dev.waitForURL('**/dashboard/settings/mfa');
  await dev.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
  await expect(dev.getByTestId('mfa-qr').isVisible()).resolves.toBe(true);
  const secret = (await dev.getByTestId('mfa-secret').textContent())!.trim();
  const step = stepAt(new Date());
  const codeAt = (s: number) => totpCode(base32Decode(secret)!, s);
  await dev.getByLabel('The 6-digit code the app shows').fill(codeAt(step));
  await dev.getByRole('button', { name: 'Turn on' }).click();
  const recovery = (await dev.getByTestId('recovery-codes').locator('code').allTextContents()).map((c) => c.trim());
  expect(recovery).toHaveLength(10);
  await dev.goto(`${stack.url}/dashboard/products`);
  await expect(dev.getByRole('heading', { name: 'Products' }).isVisible()).resolves.toBe(true);

  // Without a code there is no session; with one there is.
  await signOut(dev);
  await signIn(dev, devEmail);
  await dev.waitForURL('**/dashboard/signin/code');
  await dev.goto(`${stack.url}/dashboard/products`);
  await dev.waitForURL('**/dashboard/signin');
  await signIn(dev, devEmail);
  await giveCode(dev, codeAt(step)); // the enrolment's code: used already
  await expect(dev.getByText('that code was used already').isVisible()).resolves.toBe(true);
  await giveCode(dev, codeAt(step + 1));
  await dev.waitForURL(/\/dashboard$/);

  // A recovery code works once.
  await signOut(dev);
  await signIn(dev, devEmail);
  await giveCode(dev, recovery[0]);
  await dev.waitForURL(/\/dashboard$/);
  await signOut(dev);
  await signIn(dev, devEmail);
  await giveCode(dev, recovery[0]);
  await expect(dev.getByRole('alert').textContent()).resolves.toContain('that code is wrong');

  // A forgotten password: reset by mail, and the code is still asked for.
  await dev.goto(`${stack.url}/dashboard/signin`);
  await dev.getByRole('link', { name: 'Forgot your password?' }).click();
  await dev.getByLabel('E-mail').fill(devEmail);
  await dev.getByRole('button', { name: 'Send the link' }).click();
  await dev.waitForURL('**/dashboard/password/sent');
  await dev.goto(await linkIn(devEmail, 2, '/dashboard/password/reset'));
  await dev.getByLabel('New password').fill('an entirely new passphrase');
  await dev.getByRole('button', { name: 'Set the password and sign in' }).click();
  await dev.waitForURL('**/dashboard/signin/code');
  await giveCode(dev, recovery[1]);
  await dev.waitForURL(/\/dashboard$/);

  // The owner's Audit page: each of these, with who did it.
  const rowsOf = async (action: string) => {
    await o.goto(`${stack.url}/dashboard/audit?action=${action}`);
    return o.locator('tr[data-audit-id]').allTextContents();
  };
  // The log is written from the event stream: a page may come before its entry does.
  const expectRow = (action: string, actor: string) =>
    eventually(async () => expect((await rowsOf(action)).find((r) => r.includes(actor))).toContain(action), {
      timeoutMs: 20_000,
      intervalMs: 250,
    });
  await expectRow('member.invited', `member: ${owner.email}`);
  await expectRow('member.joined', `member: ${devEmail}`);
  await expectRow('member.joined', `member: ${supportEmail}`);
  await expectRow('license.deactivated', `member: ${supportEmail}`);
  await expectRow('settings.updated', `member: ${owner.email}`);
  await expectRow('mfa.enabled', `member: ${devEmail}`);
  await expectRow('session.signed_in', `member: ${devEmail}`);
  await expectRow('session.sign_in_failed', `member: ${devEmail}`);
  await expectRow('password.reset', `member: ${devEmail}`);
});
