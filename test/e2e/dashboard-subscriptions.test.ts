// The dashboard's Subscriptions page: list and filter, one subscription with its invoices and
// licence, cancelling with a confirmation; and the product form's interval and trial.
import { randomBytes } from 'node:crypto';
import { client } from '../support/stack';
import { openSharedStack, type OpenSharedStack } from '../support/shared-stack';
import { WebClient } from '../support/web-client';

let stack: OpenSharedStack;

beforeAll(async () => {
  stack = await openSharedStack();
});

afterAll(async () => {
  await stack?.close();
});

async function ownerWithKey() {
  const web = new WebClient(stack.url, stack.topology);
  await web.signUp(`owner-${randomBytes(4).toString('hex')}@example.com`);
  const csrf = WebClient.csrf((await web.get('/dashboard/settings')).html);
  const made = await web.post('/dashboard/settings/keys', { _csrf: csrf, name: 'api', scope: 'full' });
  const key = /data-testid="new-key">([^<]+)</.exec(made.html)![1];
  return { web, api: client(stack.url, key) };
}

async function subscribe(api: ReturnType<typeof client>, productId: string) {
  const s = (await api('POST', '/api/v1/checkout', { product_id: productId, success_url: 'https://vendor.example/ok' }))
    .body;
  const buyer = new WebClient(stack.url, stack.topology);
  const page = await buyer.get(`/checkout/${s.id}`);
  await buyer.post(`/checkout/${s.id}/pay`, {
    _csrf: WebClient.csrf(page.html),
    email: 'seat@example.com',
    card: '4242424242424242',
  });
  return (await api('GET', `/api/v1/checkout/${s.id}`)).body as { subscription_id: string; license_key: string };
}

it('the product form takes an interval and a trial; a trial without an interval is refused next to its field', async () => {
  const { web, api } = await ownerWithKey();
  const form = (await web.get('/dashboard/products')).html;
  expect(form).toContain('name="price_interval"');
  expect(form).toContain('name="price_trial_days"');
  const csrf = WebClient.csrf(form);
  const made = await web.post('/dashboard/products', {
    _csrf: csrf,
    name: 'Monthly Tool',
    price_amount: '9.00',
    price_currency: 'EUR',
    price_interval: 'month',
    price_interval_count: '',
    price_trial_days: '14',
  });
  expect(made.status).toBeLessThan(400);
  const product = (await api('GET', '/api/v1/products')).body.data.find(
    (p: { name: string }) => p.name === 'Monthly Tool',
  );
  expect(product.price).toEqual({ amount: 900, currency: 'EUR', interval: 'month', interval_count: 1, trial_days: 14 });
  const refused = await web.post('/dashboard/products', {
    _csrf: csrf,
    name: 'Bad Trial',
    price_amount: '9.00',
    price_currency: 'EUR',
    price_interval: '',
    price_trial_days: '7',
  });
  expect(refused.status).toBe(400);
  expect(refused.html).toContain('A trial needs a subscription');
  const tooLong = await web.post('/dashboard/products', {
    _csrf: csrf,
    name: 'Too Long',
    price_amount: '9.00',
    price_currency: 'EUR',
    price_interval: 'year',
    price_trial_days: '400',
  });
  expect(tooLong.status).toBe(400);
  expect((await api('GET', '/api/v1/products')).body.data.map((p: { name: string }) => p.name)).not.toContain(
    'Too Long',
  );
});

it('lists and filters subscriptions, shows one with its invoices and licence, and cancels it after a confirmation', async () => {
  const { web, api } = await ownerWithKey();
  const productId = (
    await api('POST', '/api/v1/products', {
      name: 'Seat Plan',
      price: { amount: 1200, currency: 'USD', interval: 'month' },
    })
  ).body.id;
  const bought = await subscribe(api, productId);
  const list = await web.get('/dashboard/subscriptions');
  expect(list.status).toBe(200);
  expect(list.html).toContain(`data-subscription-id="${bought.subscription_id}"`);
  expect((await web.get('/dashboard/subscriptions?status=canceled')).html).not.toContain(
    `data-subscription-id="${bought.subscription_id}"`,
  );
  expect((await web.get('/dashboard/subscriptions?customer_email=SEAT%40example.com')).html).toContain(
    `data-subscription-id="${bought.subscription_id}"`,
  );
  const detail = await web.get(`/dashboard/subscriptions/${bought.subscription_id}`);
  expect(detail.status).toBe(200);
  expect(detail.html).toContain(bought.license_key);
  expect(detail.html).toContain('12.00 USD');
  expect(detail.html).toMatch(/<h2>Invoices<\/h2>[\s\S]*paid/);
  // The first post asks for confirmation and changes nothing.
  const csrf = WebClient.csrf(detail.html);
  const ask = await web.post(`/dashboard/subscriptions/${bought.subscription_id}/cancel?at_period_end=false`, {
    _csrf: csrf,
  });
  expect(ask.status).toBe(200);
  expect(ask.html).toContain('Cancel subscription?');
  expect((await api('GET', `/api/v1/subscriptions/${bought.subscription_id}`)).body.status).toBe('active');
  const done = await web.post(`/dashboard/subscriptions/${bought.subscription_id}/cancel?at_period_end=false`, {
    _csrf: csrf,
    confirm: 'yes',
  });
  expect(done.status).toBe(200);
  expect(done.html).toContain('The subscription is canceled.');
  expect((await api('GET', `/api/v1/subscriptions/${bought.subscription_id}`)).body.status).toBe('canceled');
  const again = await web.post(`/dashboard/subscriptions/${bought.subscription_id}/cancel?at_period_end=true`, {
    _csrf: csrf,
    confirm: 'yes',
  });
  expect(again.status).toBe(409);
  // Another account sees no such subscription.
  const stranger = await ownerWithKey();
  expect((await stranger.web.get(`/dashboard/subscriptions/${bought.subscription_id}`)).status).toBe(404);
  expect((await stranger.web.get('/dashboard/subscriptions')).html).not.toContain(bought.subscription_id);
});
