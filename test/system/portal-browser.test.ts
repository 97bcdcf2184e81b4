import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS, launchBrowser } from '../support/browser';
import { overflowOf } from '../support/dashboard-browser';
import { nthMailTo, portalLinkIn } from '../support/portal';
import { SmtpInbox } from '../support/smtp-inbox';
import { client, startStack, type Stack } from '../support/stack';

// The customer portal in a real headless Chromium against the real stack and SMTP server, one flow per
// test, each with screenshots (test-artifacts/portal-*.png). Script errors and CSP violations fail it.
// Own stack: customer mail goes to this file's SMTP inbox, with a fast send interval and retry schedule.

let stack: Stack;
let inbox: SmtpInbox;
let browser: Browser;

beforeAll(async () => {
  inbox = await SmtpInbox.start();
  stack = await startStack({
    customerMailUrl: inbox.url,
    mailRetryScheduleS: Array(40).fill('0.3').join(','),
    mailSendIntervalMs: 100,
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await inbox?.stop();
});

const unique = (name: string) => `${name}-${randomBytes(4).toString('hex')}@example.com`;

/** A vendor (its name with markup, to see it escaped) and a product of two seats. */
async function vendor(name = 'Photon <Apps> & Co') {
  const created = await stack.admin.createAccount({ name, plan: 'enterprise' });
  const api = client(stack.url, created.secret);
  const product = await api('POST', '/api/v1/products', {
    name: 'Pixel Forge',
    policy: { max_activations: 2, entitlements: ['pdf-export'] },
  });
  const issue = async (email: string) =>
    (await api('POST', '/api/v1/licenses', { product_id: product.body.id, customer_email: email })).body
      .license_key as string;
  const activate = (key: string, fingerprint: string, machine: string) =>
    client(stack.url)(
      'POST',
      `/api/v1/licenses/${key}/activations`,
      { fingerprint, name: machine },
      { authorization: `License ${key}` },
    );
  return { accountId: created.account!.id, api, issue, activate };
}

/** A fresh browser context (a phone's when asked) collecting script errors. */
async function customer(opts: { phone?: boolean } = {}) {
  const context = await browser.newContext(
    opts.phone ? { viewport: { width: 390, height: 844 }, isMobile: true } : { viewport: { width: 1280, height: 900 } },
  );
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // Refusals (400, 404, 429) are answered on purpose, and Chromium logs them; anything else is a fault.
  page.on(
    'console',
    (m) => m.type() === 'error' && !/status of (400|404|409|429)/.test(m.text()) && errors.push(m.text()),
  );
  page.setDefaultTimeout(8000);
  return {
    page,
    errors,
    shot: (name: string) => page.screenshot({ path: join(ARTIFACTS, `portal-${name}.png`), fullPage: true }),
    close: () => context.close(),
  };
}

/** Enters the e-mail on the portal and opens the link the mail brings; returns the link (path and token). */
async function signIn(page: Page, accountId: string, email: string) {
  const before = inbox.to(email).length;
  await page.goto(`${stack.url}/portal/${accountId}`);
  await page.getByLabel('Your e-mail address').fill(email);
  await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
  await page.getByRole('heading', { name: 'Check your inbox' }).waitFor();
  const link = portalLinkIn(await nthMailTo(inbox, email, before + 1));
  await page.goto(`${stack.url}${link.path}`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  return link;
}

it('signs in by the e-mailed link and sees only this e-mail’s licences with this vendor', async () => {
  const v = await vendor();
  const other = await vendor('Another Vendor');
  const email = unique('buyer');
  const key = await v.issue(email);
  const neighbour = await v.issue(unique('neighbour'));
  const elsewhere = await other.issue(email);
  const c = await customer();
  await c.page.goto(`${stack.url}/portal/${v.accountId}`);
  expect(await c.page.locator('.brand').textContent()).toBe('Photon <Apps> & Co'); // escaped, shown as text
  await c.shot('sign-in');
  await signIn(c.page, v.accountId, email);
  await c.page.waitForURL(`**/portal/${v.accountId}`);
  await c.page.getByRole('heading', { name: 'Your licences' }).waitFor();
  const html = await c.page.content();
  expect(html).not.toContain(neighbour);
  expect(html).not.toContain(elsewhere);
  // Masked until revealed; the reveal is a <details>, and the script enables a copy button.
  await expect(c.page.getByText(`•••••-•••••-•••••-•••••-•••••-${key.slice(-5)}`).isVisible()).resolves.toBe(true);
  await expect(c.page.getByTestId('key-0').isVisible()).resolves.toBe(false);
  await c.page.getByText('Reveal key').click();
  await expect(c.page.getByTestId('key-0').textContent()).resolves.toBe(key);
  await expect(c.page.getByRole('button', { name: 'Copy key' }).isVisible()).resolves.toBe(true);
  await expect(c.page.getByText('pdf-export').isVisible()).resolves.toBe(true);
  await c.shot('licences');
  expect(c.errors).toEqual([]);
  await c.close();
});

it('frees a machine: the seat is free for the app again', async () => {
  const v = await vendor();
  const email = unique('freer');
  const key = await v.issue(email);
  expect((await v.activate(key, 'fp-old', 'Old laptop')).status).toBe(201);
  expect((await v.activate(key, 'fp-desk', 'Desk PC')).status).toBe(201);
  expect((await v.activate(key, 'fp-new', 'New laptop')).status).toBe(409);
  const c = await customer();
  await signIn(c.page, v.accountId, email);
  await c.page.getByRole('link', { name: /Machines and licence file/ }).click();
  await c.page.getByRole('heading', { name: 'Machines' }).waitFor();
  await expect(c.page.getByRole('row', { name: /Old laptop/ }).isVisible()).resolves.toBe(true);
  await c.shot('licence-machines');
  await c.page.getByRole('button', { name: 'Free this machine: Old laptop' }).click();
  await expect(c.page.getByRole('status').filter({ hasText: 'The machine is freed' }).isVisible()).resolves.toBe(true);
  expect(await c.page.getByRole('row', { name: /Old laptop/ }).count()).toBe(0);
  await c.shot('machine-freed');
  expect((await v.activate(key, 'fp-new', 'New laptop')).status).toBe(201);
  expect(c.errors).toEqual([]);
  await c.close();
});

it('the same link a second time does not sign in, and offers a new one', async () => {
  const v = await vendor();
  const email = unique('twice');
  await v.issue(email);
  const first = await customer();
  const link = await signIn(first.page, v.accountId, email);
  await first.page.getByRole('heading', { name: 'Your licences' }).waitFor();
  const second = await customer();
  await second.page.goto(`${stack.url}${link.path}`);
  await second.page.getByRole('button', { name: 'Sign in' }).click();
  await second.page.getByRole('heading', { name: 'This link cannot be used' }).waitFor();
  await expect(second.page.getByRole('alert').textContent()).resolves.toContain('used, expired or wrong');
  await expect(second.page.getByRole('button', { name: 'E-mail me a new link' }).isVisible()).resolves.toBe(true);
  await second.shot('link-used');
  expect([...first.errors, ...second.errors]).toEqual([]);
  await first.close();
  await second.close();
});

it('a licence key of another e-mail or another account in the URL is the 404 page, and nothing changes', async () => {
  const v = await vendor();
  const other = await vendor('Other Vendor');
  const email = unique('curious');
  await v.issue(email);
  const neighbour = await v.issue(unique('neighbour'));
  const elsewhere = await other.issue(unique('elsewhere'));
  expect((await v.activate(neighbour, 'fp-n', 'Neighbour PC')).status).toBe(201);
  const c = await customer();
  await signIn(c.page, v.accountId, email);
  await c.page.getByRole('heading', { name: 'Your licences' }).waitFor();
  for (const key of [neighbour, elsewhere]) {
    const res = await c.page.goto(`${stack.url}/portal/${v.accountId}/licenses/${key}`);
    expect(res!.status()).toBe(404);
    await c.page.getByRole('heading', { name: 'Not found' }).waitFor();
    expect(await c.page.content()).not.toContain('Neighbour PC');
  }
  await c.shot('not-found');
  // A forged form naming the neighbour's machine: 404, and the machine stays.
  const activations = (await v.api('GET', `/api/v1/licenses/${neighbour}/activations`)).body.data as { id: string }[];
  const forged = await c.page.evaluate(
    async ([path]) => (await fetch(path, { method: 'POST', body: new URLSearchParams({ _csrf: 'x' }) })).status,
    [`/portal/${v.accountId}/licenses/${neighbour}/activations/${activations[0].id}/deactivate`],
  );
  expect([403, 404]).toContain(forged);
  expect((await v.api('GET', `/api/v1/licenses/${neighbour}/activations`)).body.data).toHaveLength(1);
  await c.close();
});

it("seat rescue from the app e-mails a link that opens on that licence's machines", async () => {
  const v = await vendor();
  const email = unique('rescued');
  const key = await v.issue(email);
  await v.issue(email); // another licence of the same buyer: the link still opens on the rescued one
  await v.activate(key, 'fp-a', 'Studio Mac');
  await v.activate(key, 'fp-b', 'Home PC');
  const full = await v.activate(key, 'fp-c', 'New PC');
  expect(full.body.next_action).toBe('free_a_seat');
  const asked = await client(stack.url)('POST', `/api/v1/licenses/${key}/seat-rescue`, undefined, {
    authorization: `License ${key}`,
  });
  expect(asked.status).toBe(202);
  const link = portalLinkIn(await nthMailTo(inbox, email));
  const c = await customer();
  await c.page.goto(`${stack.url}${link.path}`);
  await c.page.getByRole('button', { name: 'Sign in' }).click();
  await c.page.waitForURL(`**/portal/${v.accountId}/licenses/${key}`);
  await expect(c.page.getByRole('row', { name: /Studio Mac/ }).isVisible()).resolves.toBe(true);
  await c.shot('seat-rescue');
  await c.page.getByRole('button', { name: 'Free this machine: Home PC' }).click();
  await c.page.getByText('The machine is freed').waitFor();
  expect((await v.activate(key, 'fp-c', 'New PC')).status).toBe(201);
  expect(c.errors).toEqual([]);
  await c.close();
});

/** What has the focus: its tag, its accessible name (aria-label, its label, else its text), and whether it shows a focus ring. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return { tag: 'body', text: '', ring: false };
    const style = getComputedStyle(el);
    return {
      tag: el.tagName.toLowerCase(),
      text: (el.getAttribute('aria-label') ?? (el as HTMLInputElement).labels?.[0]?.textContent ?? el.textContent ?? '')
        .trim()
        .replace(/\s+/g, ' '),
      ring: style.outlineStyle !== 'none' && Number.parseFloat(style.outlineWidth) > 0,
    };
  });

/** Presses Tab until what matches has the focus (at most `max` times), as a keyboard user does; it must show a ring. */
async function tabTo(page: Page, what: RegExp, max = 25): Promise<void> {
  const passed: string[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const f = await focused(page);
    passed.push(`${f.tag} "${f.text}"`);
    if (what.test(f.text)) {
      expect([f.text, f.ring]).toEqual([f.text, true]);
      return;
    }
  }
  throw new Error(`Tab never reached ${what}; it went through ${passed.join(', ')}`);
}

it('by keyboard alone: skip link first, sign in by the e-mailed link, reveal the key, free a machine, sign out', async () => {
  const v = await vendor();
  const email = unique('keyboard');
  const key = await v.issue(email);
  expect((await v.activate(key, 'fp-kb-old', 'Old keyboard laptop')).status).toBe(201);
  const c = await customer();
  const { page } = c;
  await page.goto(`${stack.url}/portal/${v.accountId}`);
  // The first Tab stop is the skip link, visible once focused; it leads to the main content.
  await page.keyboard.press('Tab');
  expect(await focused(page)).toEqual({ tag: 'a', text: 'Skip to content', ring: true });
  await expect(page.getByRole('link', { name: 'Skip to content' }).isVisible()).resolves.toBe(true);
  await tabTo(page, /^Your e-mail address/);
  await page.keyboard.type(email);
  await c.shot('keyboard-sign-in');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Check your inbox' }).waitFor();
  // The link is opened from the mail client; the rest is the keyboard again.
  const link = portalLinkIn(await nthMailTo(inbox, email));
  await page.goto(`${stack.url}${link.path}`);
  await tabTo(page, /^Sign in$/);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Your licences' }).waitFor();
  await tabTo(page, /^Reveal key$/);
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('key-0').textContent()).resolves.toBe(key);
  await tabTo(page, /^Machines and licence file of Pixel Forge/);
  await c.shot('keyboard-licences');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Machines' }).waitFor();
  await tabTo(page, /^Free this machine: Old keyboard laptop$/);
  await c.shot('keyboard-free');
  await page.keyboard.press('Space');
  await page.getByRole('status').filter({ hasText: 'The machine is freed' }).waitFor();
  expect((await v.api('GET', `/api/v1/licenses/${key}/activations`)).body.data).toEqual([]);
  await tabTo(page, /^Sign out$/);
  await page.keyboard.press('Enter');
  await page.getByRole('button', { name: 'E-mail me a sign-in link' }).waitFor();
  await c.shot('keyboard-signed-out');
  expect(c.errors).toEqual([]);
  await c.close();
});

it('fits a phone: nothing wider than the screen, the key and the machines reachable', async () => {
  const v = await vendor();
  const email = unique('phone');
  const key = await v.issue(email);
  await v.activate(key, 'a-very-long-fingerprint-of-a-machine-0123456789abcdef', 'Phone-sized laptop');
  const c = await customer({ phone: true });
  await c.page.goto(`${stack.url}/portal/${v.accountId}`);
  expect(await overflowOf(c.page)).toBeLessThanOrEqual(0);
  await c.shot('phone-sign-in');
  await signIn(c.page, v.accountId, email);
  await c.page.getByRole('heading', { name: 'Your licences' }).waitFor();
  expect(await overflowOf(c.page)).toBeLessThanOrEqual(0);
  await c.shot('phone-licences');
  await c.page.getByRole('link', { name: /Machines and licence file/ }).click();
  await c.page.getByRole('heading', { name: 'Machines' }).waitFor();
  expect(await overflowOf(c.page)).toBeLessThanOrEqual(0);
  await c.shot('phone-machines');
  expect(c.errors).toEqual([]);
  await c.close();
});
