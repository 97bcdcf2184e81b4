import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Topology } from '../../scripts/lib/topology';
import { ARTIFACTS } from './browser';
import { signupToken, waitForMail } from './mailbox';

/** A signed-up vendor in a fresh browser context, with script errors and CSP violations collected. */
export interface Vendor {
  context: BrowserContext;
  page: Page;
  email: string;
  /** Console errors and uncaught exceptions: a CSP violation shows up here. */
  errors: string[];
  shot(name: string): Promise<void>;
}

/** Signs up through the form and the e-mailed link (read from the stack's mail folder). */
export async function signUpInBrowser(
  browser: Browser,
  stack: { url: string; topology: Topology },
  opts: { phone?: boolean; company?: string } = {},
): Promise<Vendor> {
  const baseUrl = stack.url;
  const context = await browser.newContext(
    opts.phone ? { viewport: { width: 390, height: 844 }, isMobile: true } : { viewport: { width: 1280, height: 900 } },
  );
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // A refused form answers 400 or 409 on purpose, and Chromium logs that; anything else is a fault.
  page.on('console', (m) => m.type() === 'error' && !/status of (400|409)/.test(m.text()) && errors.push(m.text()));
  page.setDefaultTimeout(8000); // fail at the step that went wrong, well inside the test's time
  const email = `vendor-${randomBytes(4).toString('hex')}@example.com`;
  await page.goto(`${baseUrl}/dashboard/signup`);
  await page.getByLabel('Company or product name').fill(opts.company ?? 'Photon Apps');
  await page.getByLabel('Your e-mail').fill(email);
  await page.getByLabel('Password').fill('a long and happy passphrase');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL('**/dashboard/signup/sent');
  await page.goto(`${baseUrl}/dashboard/signup/confirm?token=${signupToken(await waitForMail(stack.topology, email))}`);
  await page.getByRole('button', { name: 'Create my account' }).click();
  await page.waitForURL('**/dashboard/settings');
  return {
    context,
    page,
    email,
    errors,
    shot: (name) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true }).then(() => undefined),
  };
}

/** Creates a product through the Products page; returns its id. */
export async function createProductInBrowser(
  page: Page,
  baseUrl: string,
  p: {
    name: string;
    price?: string;
    durationDays?: string;
    maxActivations?: string;
    graceDays?: string;
    requireActivation?: boolean;
    /** A subscription price: billed every month or year (the Billing select). */
    interval?: 'month' | 'year';
  },
): Promise<string> {
  await page.goto(`${baseUrl}/dashboard/products`);
  await page.getByLabel('Name', { exact: true }).fill(p.name);
  if (p.price) await page.getByLabel('Price').fill(p.price);
  if (p.interval) await page.getByLabel('Billing').selectOption(p.interval);
  if (p.durationDays) await page.getByLabel('Licence duration in days').fill(p.durationDays);
  if (p.graceDays) await page.getByLabel('Grace days after expiry').fill(p.graceDays);
  if (p.maxActivations) await page.getByLabel('Maximum activations').fill(p.maxActivations);
  if (p.requireActivation) await page.getByLabel('Validation requires an activated machine').check();
  await page.getByRole('button', { name: 'Create product' }).click();
  await page.waitForURL(/\/dashboard\/products\/prod_[0-9A-Z]{26}\?created=1$/);
  return /prod_[0-9A-Z]{26}/.exec(page.url())![0];
}

/** Generates a full-scope API key on the Settings page (the tests drive the API with it, as an app would). */
export async function apiKeyInBrowser(page: Page, baseUrl: string): Promise<string> {
  await page.goto(`${baseUrl}/dashboard/settings`);
  await page.getByLabel('Name').fill('test app');
  await page.getByLabel('Scope').selectOption('full');
  await page.getByRole('button', { name: 'Generate API key' }).click();
  return (await page.getByTestId('new-key').textContent())!.trim();
}

/** Nothing on the page is wider than the screen (a phone scrolls only down). */
export const overflowOf = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
