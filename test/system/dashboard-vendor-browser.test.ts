import type { Browser } from 'playwright-core';
import { client, startStack, type Stack } from '../support/stack';
import { launchBrowser } from '../support/browser';
import { apiKeyInBrowser, createProductInBrowser, overflowOf, signUpInBrowser } from '../support/dashboard-browser';
import { eventually } from '../support/eventually';
import { WebhookReceiver } from '../support/webhook-receiver';

// Each of a vendor's flows in the dashboard, in a real headless Chromium: one
// browser for the file, a fresh account and context per flow. Screenshots go
// to test-artifacts/.
// Own stack: each flow signs up through the dashboard (throttled per address) and the webhook flow points the
// stack's deliveries at this file's receiver.
let stack: Stack;
let browser: Browser;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [stack, browser, receiver] = await Promise.all([startStack(), launchBrowser(), WebhookReceiver.start()]);
});

afterAll(async () => {
  await browser?.close();
  await receiver?.stop();
  await stack?.stop();
});

it('products: create one (mistakes shown next to their fields), edit its price and policy, rotate its signing key', async () => {
  const v = await signUpInBrowser(browser, stack);
  const { page } = v;
  await page.getByRole('link', { name: 'Products' }).click();
  await expect(page.getByText('No products yet. Create your first one below').isVisible()).resolves.toBe(true);

  // Mistakes: each message sits next to its field, nothing is created.
  await page.getByLabel('Price').fill('12,50');
  await page.getByLabel('Grace days after expiry').fill('soon');
  await page.getByRole('button', { name: 'Create product' }).click();
  await expect(page.locator('#price_amount-error').textContent()).resolves.toContain(
    'Enter an amount such as 19 or 19.99',
  );
  await expect(page.locator('#grace_days-error').textContent()).resolves.toContain('Enter a whole number');
  await expect(page.getByLabel('Price').getAttribute('aria-invalid')).resolves.toBe('true');
  await page.getByLabel('Price').fill('');
  await page.getByLabel('Grace days after expiry').fill('3');
  await page.getByRole('button', { name: 'Create product' }).click();
  await expect(page.locator('#name-error').textContent()).resolves.toContain('name is required');
  await page.getByLabel('Name', { exact: true }).fill('Half-made');
  await page.getByRole('button', { name: 'Create product' }).click(); // grace without a duration: the product service's rule
  await expect(page.locator('#grace_days-error').textContent()).resolves.toContain(
    'only applies to licences that expire',
  );
  await expect(page.locator('#name-error').count()).resolves.toBe(0);
  await expect(page.getByLabel('Name', { exact: true }).inputValue()).resolves.toBe('Half-made'); // the form comes back as typed
  await v.shot('dashboard-products-errors');

  await expect(page.getByText('No products yet').isVisible()).resolves.toBe(true); // nothing was created
  const id = await createProductInBrowser(page, stack.url, {
    name: 'Photon Pro',
    price: '49',
    durationDays: '365',
    graceDays: '7',
    maxActivations: '2',
  });
  await expect(page.getByText('Product created.').isVisible()).resolves.toBe(true);
  const keyRows = page.locator('section[aria-labelledby="keys-title"] tbody tr');
  await expect(keyRows.count()).resolves.toBe(1); // made with the product

  // Edit: name, price and policy; the API sees the same product.
  await page.getByLabel('Name', { exact: true }).fill('Photon Pro 2');
  await page.getByLabel('Price').fill('59.99');
  await page.getByLabel('Currency').fill('eur');
  await page.getByLabel('Maximum activations').fill('');
  await page.getByLabel('Validation requires an activated machine').check();
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expect(page.getByText('Saved.').isVisible()).resolves.toBe(true);
  const api = client(stack.url, await apiKeyInBrowser(page, stack.url));
  expect((await api('GET', `/api/v1/products/${id}`)).body).toMatchObject({
    name: 'Photon Pro 2',
    price: { amount: 5999, currency: 'EUR' },
    policy: { duration_days: 365, grace_days: 7, max_activations: null, require_activation: true },
  });

  // Signing keys: rotate after a confirmation, twice; earlier keys stay listed.
  await page.goto(`${stack.url}/dashboard/products/${id}`);
  for (const round of [1, 2]) {
    await page.getByRole('link', { name: 'Rotate signing key' }).click();
    await expect(page.getByRole('heading', { name: 'Rotate signing key?' }).isVisible()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Rotate key' }).click();
    await expect(page.getByText('New signing key').isVisible()).resolves.toBe(true);
    await expect(keyRows.count()).resolves.toBe(1 + round);
  }
  const keys = (await api('GET', `/api/v1/products/${id}/signing-keys`)).body.data as {
    kid: string;
    current: boolean;
  }[];
  expect(keys).toHaveLength(3);
  await expect(keyRows.filter({ hasText: 'current' }).textContent()).resolves.toContain(
    keys.find((k) => k.current)!.kid,
  );
  await v.shot('dashboard-product');
  expect(v.errors).toEqual([]);
  await v.context.close();
});

it('licences: issue one and copy its key, search, see activations and validations, deactivate, download the file, renew, suspend, reinstate, revoke', async () => {
  const v = await signUpInBrowser(browser, stack);
  const { page } = v;
  await v.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.url });
  await page.goto(`${stack.url}/dashboard/licenses`);
  await expect(page.getByText('there is none yet').isVisible()).resolves.toBe(true);
  const productId = await createProductInBrowser(page, stack.url, {
    name: 'Desk Timer',
    durationDays: '30',
    maxActivations: '3',
  });
  const api = client(stack.url, await apiKeyInBrowser(page, stack.url));

  // Issue: a missing e-mail is an error next to the field; then the key, with a copy button.
  await page.getByRole('link', { name: 'Licences' }).click();
  await page.getByLabel('Product').selectOption(productId);
  await page.getByRole('button', { name: 'Issue licence' }).click();
  await expect(page.locator('#customer_email-error').textContent()).resolves.toContain('Enter the customer’s e-mail');
  await page.getByLabel('Customer e-mail', { exact: true }).fill('not-an-address');
  await page.getByRole('button', { name: 'Issue licence' }).click();
  await expect(page.locator('#customer_email-error').isVisible()).resolves.toBe(true);
  await page.getByLabel('Customer e-mail', { exact: true }).fill('ada@example.com');
  await page.getByRole('button', { name: 'Issue licence' }).click();
  const key = (await page.getByTestId('new-license-key').textContent())!.trim();
  expect(key).toMatch(/^([0-9A-Z]{5}-){5}[0-9A-Z]{5}$/);
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.getByRole('button', { name: 'Copied' }).waitFor();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
  await v.shot('dashboard-license-issued');

  // Search by e-mail and by key.
  await page.getByLabel('Licence key or customer e-mail').fill('ADA@example.com');
  await page.getByRole('button', { name: 'Search' }).click();
  await expect(page.locator(`tr[data-license-key="${key}"]`).count()).resolves.toBe(1);
  await page.getByLabel('Licence key or customer e-mail').fill(key.toLowerCase());
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('link', { name: key }).click();
  await expect(page.getByTestId('last-validated').textContent()).resolves.toContain('never');

  // The app activates a machine and validates: the page shows both.
  const activation = (
    await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'mac-studio-01', name: 'Studio' })
  ).body;
  expect((await api('GET', `/api/v1/licenses/validate?license_key=${key}&fingerprint=mac-studio-01`)).body.code).toBe(
    'valid',
  );
  expect((await api('GET', `/api/v1/licenses/validate?license_key=${key}&fingerprint=mac-studio-01`)).body.code).toBe(
    'valid',
  ); // from the gateway's cache
  // The counts reach the page after the gateway's next stats flush: reload until they do (each look is short).
  await eventually(
    async () => {
      await page.reload();
      expect(await page.getByTestId('last-validated').textContent({ timeout: 1000 })).toMatch(/UTC/);
      expect(
        await page.locator('section[aria-labelledby="recent-title"] tbody tr').first().textContent({ timeout: 1000 }),
      ).toMatch(/valid.*mac-studio-01.*2/s);
    },
    { timeoutMs: 20_000, intervalMs: 200 },
  );
  await expect(page.locator(`tr[data-activation-id="${activation.id}"]`).textContent()).resolves.toContain(
    'mac-studio-01',
  );

  // The licence file downloads as JSON signed by the product's key.
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download licence file' }).click(),
  ]);
  const file = JSON.parse(await streamText(await download.createReadStream()));
  expect(file).toMatchObject({
    algorithm: 'Ed25519',
    kid: expect.any(String),
    payload: expect.any(String),
    signature: expect.any(String),
  });
  expect(JSON.parse(Buffer.from(file.payload, 'base64url').toString()).license_key).toBe(key);

  // Deactivate the machine, after a confirmation.
  await page.locator(`tr[data-activation-id="${activation.id}"]`).getByRole('link', { name: 'Deactivate' }).click();
  await page.getByRole('button', { name: 'Deactivate machine' }).click();
  await expect(page.getByText('Deactivated mac-studio-01').isVisible()).resolves.toBe(true);
  expect((await api('GET', `/api/v1/licenses/${key}/activations`)).body.data).toEqual([]);

  // Renew moves the expiry on; suspend, reinstate and revoke change what validation answers.
  const expiry = (await api('GET', `/api/v1/licenses/${key}`)).body.expires_at;
  const act = async (link: string, button: string, status: string) => {
    await page.locator('.actions').getByRole('link', { name: link, exact: true }).click();
    await expect(page.getByRole('heading', { name: `${link} licence?` }).isVisible()).resolves.toBe(true);
    await page.getByRole('button', { name: button }).click();
    await expect(page.getByTestId('license-status').textContent()).resolves.toBe(status);
  };
  await act('Renew', 'Renew licence', 'active');
  expect(Date.parse((await api('GET', `/api/v1/licenses/${key}`)).body.expires_at)).toBeGreaterThan(Date.parse(expiry));
  await act('Suspend', 'Suspend licence', 'suspended');
  expect((await api('GET', `/api/v1/licenses/validate?license_key=${key}`)).body.code).toBe('suspended');
  await act('Reinstate', 'Reinstate licence', 'active');
  expect((await api('GET', `/api/v1/licenses/validate?license_key=${key}`)).body.code).toBe('valid');
  await act('Revoke', 'Revoke licence', 'revoked');
  expect((await api('GET', `/api/v1/licenses/validate?license_key=${key}`)).body.code).toBe('revoked');
  await expect(page.locator('.actions').count()).resolves.toBe(0); // nothing left to do with a revoked licence
  await v.shot('dashboard-license');
  expect(v.errors).toEqual([]);
  await v.context.close();
});

it('webhooks: add an endpoint (secret shown once), send a test event, see a failure, retry it, disable and enable, rotate the secret', async () => {
  const v = await signUpInBrowser(browser, stack);
  const { page } = v;
  await page.getByRole('link', { name: 'Webhooks' }).click();
  await expect(page.getByText('No webhook endpoints yet').isVisible()).resolves.toBe(true);

  // Mistakes next to the fields.
  await page.getByLabel('All events').uncheck();
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  await expect(page.locator('#url-error').textContent()).resolves.toContain('Enter the URL');
  await expect(page.locator('#events-error').textContent()).resolves.toContain('Choose at least one event type');
  await page.getByLabel('URL').fill('ftp://example.com/hook');
  await page.getByLabel('webhook.test').check();
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  await expect(page.locator('#url-error').isVisible()).resolves.toBe(true);

  const path = '/dash-hook';
  receiver.answer(path, 200, 500);
  await page.getByLabel('URL').fill(`${receiver.url}${path}`);
  await page.getByLabel('Description').fill('order system');
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  const secret = (await page.getByTestId('webhook-secret').textContent())!.trim();
  expect(secret).toMatch(/^whsec_/);
  await v.shot('dashboard-webhook-added');

  // A test event is delivered (200), the next one fails (500) until retried.
  await page.getByRole('button', { name: 'Send test event' }).click();
  await expect(page.getByText('Test event queued').isVisible()).resolves.toBe(true);
  await receiver.waitFor(path, 1);
  const detailUrl = await page.evaluate(() =>
    (document.querySelector('form[action$="/test"]') as HTMLFormElement).action.replace(/\/test$/, ''),
  );
  await eventually(
    async () => {
      await page.goto(detailUrl);
      expect(await page.locator('tbody tr').first().textContent({ timeout: 1000 })).toMatch(/delivered.*200/s);
    },
    { timeoutMs: 20_000, intervalMs: 200 },
  );
  await page.getByRole('button', { name: 'Send test event' }).click();
  await receiver.waitFor(path, 2);
  await eventually(
    async () => {
      await page.goto(detailUrl);
      expect(await page.locator('tbody tr').first().textContent({ timeout: 1000 })).toMatch(/failed.*500/s);
    },
    { timeoutMs: 20_000, intervalMs: 200 },
  );
  const attempts = Number(await page.locator('tbody tr').first().locator('td').nth(2).textContent());
  expect(attempts).toBeGreaterThan(1);
  await v.shot('dashboard-webhook-failed');
  receiver.answer(path, 200);
  await page.locator('tbody tr').first().getByRole('button', { name: 'Retry' }).click();
  await expect(page.getByText('Sending it again now.').isVisible()).resolves.toBe(true);
  await eventually(
    async () => {
      await page.goto(detailUrl);
      expect(await page.locator('tbody tr').first().textContent({ timeout: 1000 })).toMatch(/delivered.*200/s);
    },
    { timeoutMs: 20_000, intervalMs: 200 },
  );

  // Disable and enable.
  await page.getByRole('button', { name: 'Disable' }).click();
  await expect(page.getByTestId('endpoint-status').textContent()).resolves.toBe('disabled');
  await expect(page.getByRole('button', { name: 'Send test event' }).count()).resolves.toBe(0);
  await page.getByRole('button', { name: 'Enable' }).click();
  await expect(page.getByTestId('endpoint-status').textContent()).resolves.toBe('enabled');

  // Rotate: a new secret, shown once.
  await page.getByRole('link', { name: 'Rotate secret' }).click();
  await page.getByRole('button', { name: 'Rotate secret' }).click();
  const rotated = (await page.getByTestId('webhook-secret').textContent())!.trim();
  expect(rotated).toMatch(/^whsec_/);
  expect(rotated).not.toBe(secret);
  await page.goto(detailUrl);
  await expect(page.getByTestId('webhook-secret').count()).resolves.toBe(0);
  await v.shot('dashboard-webhook');
  expect(v.errors).toEqual([]);
  await v.context.close();
});

it('checkout: create a link for a priced product, pay on it, and see the session complete with its licence', async () => {
  const v = await signUpInBrowser(browser, stack);
  const { page } = v;
  await page.getByRole('link', { name: 'Checkout' }).click();
  await expect(page.getByText('Give a product a price').isVisible()).resolves.toBe(true);
  await expect(page.getByText('No checkout sessions yet').isVisible()).resolves.toBe(true);
  const productId = await createProductInBrowser(page, stack.url, { name: 'Pixel Pack', price: '19.99' });

  await page.getByRole('link', { name: 'Checkout' }).click();
  await page.getByLabel('Product').selectOption(productId);
  await page.getByRole('button', { name: 'Create link' }).click();
  await expect(page.locator('#success_url-error').textContent()).resolves.toContain('Enter where the customer goes');
  await page.getByLabel('After payment, go to').fill('javascript:alert(1)');
  await page.getByRole('button', { name: 'Create link' }).click();
  await expect(page.locator('#success_url-error').isVisible()).resolves.toBe(true);
  await page.getByLabel('After payment, go to').fill('https://example.com/thanks');
  await page.getByRole('button', { name: 'Create link' }).click();
  const url = (await page.getByTestId('checkout-url').textContent())!.trim();
  expect(url).toMatch(/\/checkout\/cs_[0-9A-Z]{26}$/);
  const sessionId = /cs_[0-9A-Z]{26}/.exec(url)![0];
  await expect(page.locator(`tr[data-session-id="${sessionId}"]`).textContent()).resolves.toMatch(
    /open.*19\.99 USD.*test/s,
  );
  await v.shot('dashboard-checkout-link');

  // A customer pays on the hosted page (test mode, test card).
  const buyer = await v.context.newPage();
  await buyer.goto(url);
  await buyer.getByLabel('E-mail for your licence').fill('buyer@example.com');
  await buyer.getByLabel('Card number').fill('4242 4242 4242 4242');
  await buyer.getByRole('button', { name: /Pay/ }).click();
  const key = (await buyer.getByTestId('license-key').textContent())!.trim();
  await buyer.close();

  await page.goto(`${stack.url}/dashboard/checkout?status=complete`);
  const row = page.locator(`tr[data-session-id="${sessionId}"]`);
  await expect(row.textContent()).resolves.toMatch(/complete.*19\.99 USD.*test.*buyer@example\.com/s);
  await row.getByRole('link', { name: key }).click();
  await expect(page.getByTestId('license-status').textContent()).resolves.toBe('active');
  await page.goto(`${stack.url}/dashboard/checkout?status=expired`);
  await expect(page.getByText('No sessions match').isVisible()).resolves.toBe(true);
  await v.shot('dashboard-checkout');
  expect(v.errors).toEqual([]);
  await v.context.close();
});

it('subscriptions: sell a monthly product, find the subscription, see its invoice and licence, cancel it at the period end after a confirmation', async () => {
  const v = await signUpInBrowser(browser, stack);
  const { page } = v;
  await page.getByRole('link', { name: 'Subscriptions' }).click();
  await expect(page.getByRole('heading', { name: 'Subscriptions' }).first().isVisible()).resolves.toBe(true);
  const productId = await createProductInBrowser(page, stack.url, {
    name: 'Monthly Lens',
    price: '9',
    interval: 'month',
  });

  // A customer subscribes on the hosted page (test mode, test card).
  await page.getByRole('link', { name: 'Checkout' }).click();
  await page.getByLabel('Product').selectOption(productId);
  await page.getByLabel('After payment, go to').fill('https://example.com/thanks');
  await page.getByRole('button', { name: 'Create link' }).click();
  const url = (await page.getByTestId('checkout-url').textContent())!.trim();
  const buyer = await v.context.newPage();
  await buyer.goto(url);
  await buyer.getByLabel('E-mail for your licence').fill('subscriber@example.com');
  await buyer.getByLabel('Card number').fill('4242 4242 4242 4242');
  await buyer.getByRole('button', { name: /Pay|Subscribe|Start/ }).click();
  const key = (await buyer.getByTestId('license-key').textContent())!.trim();
  await buyer.close();

  // Filtered by customer, then by a status it does not have.
  await page.getByRole('link', { name: 'Subscriptions' }).click();
  await page.getByLabel('Customer').fill('subscriber@example.com');
  await page.getByRole('button', { name: 'Show' }).click();
  const link = page.getByRole('link', { name: /^sub_/ }).first();
  await expect(link.isVisible()).resolves.toBe(true);
  await v.shot('dashboard-subscriptions');
  await link.click();
  await expect(page.getByTestId('subscription-status').textContent()).resolves.toMatch(/^active/);
  await expect(page.getByRole('link', { name: key }).isVisible()).resolves.toBe(true);
  const invoices = page.locator('table').last();
  await expect(invoices.textContent()).resolves.toMatch(/9\.00 USD.*paid/s);

  // Cancel at the period end: a confirmation first, then the page says so and the licence stays valid.
  await page.getByRole('button', { name: 'Cancel at period end' }).click();
  await expect(page.getByText('Its licence stays valid until').isVisible()).resolves.toBe(true);
  await page.getByRole('button', { name: 'Cancel at period end' }).click();
  await expect(page.getByRole('status').textContent()).resolves.toContain('cancels at the end of its period');
  await expect(page.getByTestId('subscription-status').textContent()).resolves.toContain('(cancels at the period end)');
  await expect(page.getByRole('button', { name: 'Cancel at period end' }).count()).resolves.toBe(0);
  await page.getByRole('link', { name: key }).click();
  await expect(page.getByTestId('license-status').textContent()).resolves.toBe('active');
  await page.goto(`${stack.url}/dashboard/subscriptions?status=canceled`);
  await expect(page.getByRole('link', { name: /^sub_/ }).count()).resolves.toBe(0);
  await v.shot('dashboard-subscription-canceling');
  expect(v.errors).toEqual([]);
  await v.context.close();
});

it('on a phone: the overview shows usage and the validation charts with text, and no page is wider than the screen', async () => {
  const v = await signUpInBrowser(browser, stack, { phone: true });
  const { page } = v;
  await page.goto(`${stack.url}/dashboard`);
  await expect(
    page.getByRole('img', { name: /Validations per hour over the last 24 hours: 0 in all/ }).isVisible(),
  ).resolves.toBe(true);
  await expect(
    page.getByRole('img', { name: /Validations per day over the last 30 days: 0 in all/ }).isVisible(),
  ).resolves.toBe(true);
  await expect(page.getByText('They appear here as your apps check their keys.').first().isVisible()).resolves.toBe(
    true,
  );
  const productId = await createProductInBrowser(page, stack.url, { name: 'Pocket', price: '5' });
  const api = client(stack.url, await apiKeyInBrowser(page, stack.url));
  const key = (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'phone@example.com' }))
    .body.license_key;
  await api('GET', `/api/v1/licenses/validate?license_key=${key}`);
  await api('GET', '/api/v1/licenses/validate?license_key=ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ');
  await eventually(
    async () => {
      await page.goto(`${stack.url}/dashboard`);
      expect(
        await page
          .getByRole('img', { name: 'Validations per hour over the last 24 hours: 2 in all, 1 valid, 1 key not found' })
          .count(),
      ).toBe(1);
    },
    { timeoutMs: 20_000, intervalMs: 200 },
  );
  await expect(page.getByRole('list', { name: 'Validations by answer' }).first().textContent()).resolves.toMatch(
    /valid: 1.*key not found: 1/s,
  );
  await expect(page.getByTestId('requests-this-hour').isVisible()).resolves.toBe(true);
  await v.shot('dashboard-overview-phone');
  for (const path of [
    '/dashboard',
    '/dashboard/products',
    `/dashboard/products/${productId}`,
    '/dashboard/licenses',
    `/dashboard/licenses/${key}`,
    '/dashboard/webhooks',
    '/dashboard/checkout',
  ]) {
    await page.goto(`${stack.url}${path}`);
    expect({ path, overflow: await overflowOf(page) }).toEqual({ path, overflow: expect.any(Number) });
    expect(await overflowOf(page)).toBeLessThanOrEqual(1);
  }
  await v.shot('dashboard-checkout-phone');
  expect(v.errors).toEqual([]);
  await v.context.close();
});

async function streamText(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text;
}
