import { openSharedStack, type OpenSharedStack } from '../support/shared-stack';
import { dashboardOwner, fieldError } from '../support/fixture';

// Bad input on every dashboard form: a 4xx page with the message next to the
// field it is about (or at the top when it is about the whole form), never a
// 500 or a stack trace, and nothing created.
let stack: OpenSharedStack;

beforeAll(async () => {
  stack = await openSharedStack();
});

afterAll(async () => {
  await stack?.close();
});

const owner = () => dashboardOwner(stack, 'forms');

const product = (over: Record<string, string>) => ({
  name: 'P',
  description: '',
  price_amount: '',
  price_currency: 'USD',
  duration_days: '',
  grace_days: '0',
  max_activations: '',
  ...over,
});

it.each([
  ['a price with a comma', { price_amount: '9,99' }, 'price_amount', 'Enter an amount'],
  ['an unknown currency', { price_amount: '9.99', price_currency: 'XQQ' }, 'price_currency', 'ISO 4217'],
  ['a duration in words', { duration_days: 'a year' }, 'duration_days', 'whole number'],
  ['a huge duration', { duration_days: '99999999999' }, 'duration_days', 'whole number'],
  ['a negative duration', { duration_days: '-5' }, 'duration_days', 'whole number from'],
  ['zero activations', { max_activations: '0' }, 'max_activations', 'whole number from'],
  ['an over-long name', { name: 'n'.repeat(250) }, 'name', 'at most 200'],
  ['no name', { name: '   ' }, 'name', 'name is required'],
])('a product with %s is refused next to the field', async (_what, over, name, message) => {
  const { web, csrf, api } = await owner();
  const res = await web.post('/dashboard/products', { _csrf: csrf, ...product(over) });
  expect(res.status).toBe(400);
  expect(fieldError(res.html, name)).toContain(message);
  expect(res.html).toContain(`aria-describedby="${name}-error"`);
  expect((await api('GET', '/api/v1/products')).body.data).toEqual([]);
});

it('licence, webhook and checkout forms refuse bad input next to the field, and odd URLs are 404 pages', async () => {
  const { web, csrf, api } = await owner();
  const productId = (await api('POST', '/api/v1/products', { name: 'Free thing' })).body.id;

  const noEmail = await web.post('/dashboard/licenses', { _csrf: csrf, product_id: productId, customer_email: '' });
  expect(noEmail.status).toBe(400);
  expect(fieldError(noEmail.html, 'customer_email')).toContain('Enter the customer');
  const badEmail = await web.post('/dashboard/licenses', {
    _csrf: csrf,
    product_id: productId,
    customer_email: 'nope',
  });
  expect(badEmail.status).toBe(400);
  expect(fieldError(badEmail.html, 'customer_email')).toBeTruthy();
  const notAProduct = await web.post('/dashboard/licenses', {
    _csrf: csrf,
    product_id: 'prod_<script>',
    customer_email: 'a@example.com',
  });
  expect(notAProduct.status).toBe(400);
  expect(notAProduct.html).not.toContain('<script>');
  expect((await api('GET', '/api/v1/licenses')).body.data).toEqual([]);

  const hook = await web.post('/dashboard/webhooks', {
    _csrf: csrf,
    url: 'http://169.254.169.254/latest',
    events: 'license.created',
  });
  expect(hook.status).toBe(400);
  expect(fieldError(hook.html, 'url')).toMatch(/^url /);
  const unknownEvent = await web.post('/dashboard/webhooks', {
    _csrf: csrf,
    url: 'http://127.0.0.1:9/hook',
    events: 'license.exploded',
  });
  expect(unknownEvent.status).toBe(400);
  expect(fieldError(unknownEvent.html, 'events')).toContain('unknown event type');
  expect((await api('GET', '/api/v1/webhooks')).body.data).toEqual([]);

  const unpriced = await web.post('/dashboard/checkout', {
    _csrf: csrf,
    product_id: productId,
    success_url: 'https://example.com/thanks',
  });
  expect([400, 409]).toContain(unpriced.status);
  expect(unpriced.html).toMatch(/class="(error|field-error)"/);
  expect((await api('GET', '/api/v1/checkout')).body.data).toEqual([]);

  // A too-long file lifetime on a real licence.
  const key = (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'f@example.com' })).body
    .license_key;
  const file = await web.post(`/dashboard/licenses/${key}/file`, { _csrf: csrf, fingerprint: '', ttl_days: '9999' });
  expect(file.status).toBe(400);
  expect(fieldError(file.html, 'ttl_days')).toContain('from 1 to 365');

  for (const path of [
    '/dashboard/licenses/not-a-key',
    '/dashboard/licenses/%E2%80%AE',
    '/dashboard/products/prod_nope',
    '/dashboard/webhooks/we_1/rotate-secret',
    `/dashboard/licenses/${key}/activations/act_x/deactivate`,
  ]) {
    const res = await web.get(path);
    expect({ path, status: res.status }).toEqual({ path, status: 404 });
    expect(res.html).toContain('<h1>Not found</h1>');
  }
  // A control character anywhere (here a query value) is a 400 page that names the field.
  const control = await web.get('/dashboard/products?starting_after=%00');
  expect(control.status).toBe(400);
  expect(control.html).toContain(
    'starting_after must not contain control characters or unpaired surrogates (found U+0000)',
  );
  const named = await web.post('/dashboard/products', { _csrf: csrf, name: 'Photo\u0000Editor', description: 'a\nb' });
  expect(named.status).toBe(400);
  expect(named.html).toContain('name must not contain control characters or unpaired surrogates (found U+0000)');
  for (const path of [
    '/dashboard/products?starting_after=nope',
    '/dashboard/licenses?status=<b>&starting_after=x',
    `/dashboard/webhooks?starting_after=${'x'.repeat(5000)}`,
    '/dashboard/checkout?status=open&starting_after=cs_x',
  ]) {
    expect({ path, status: (await web.get(path)).status }).toEqual({ path, status: 200 });
  }
});
