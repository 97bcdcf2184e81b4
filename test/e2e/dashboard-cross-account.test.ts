import { openSharedStack, type OpenSharedStack } from '../support/shared-stack';
import { eventually } from '../support/eventually';
import { WebhookReceiver } from '../support/webhook-receiver';
import { dashboardOwner } from '../support/fixture';

// A signed-in user of account B changes ids in URLs and forms to reach
// account A's products, licences, machines, webhook endpoints, deliveries and
// checkout: every attempt is a 404 page and nothing of A's changes.
let stack: OpenSharedStack;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [stack, receiver] = await Promise.all([openSharedStack(), WebhookReceiver.start()]);
});

afterAll(async () => {
  await receiver?.stop();
  await stack?.close();
});

const owner = () => dashboardOwner(stack, 'owner');

/** Account A's objects, made through the API as a vendor's code would. */
async function accountA() {
  const a = await owner();
  const product = (
    await a.api('POST', '/api/v1/products', {
      name: 'Alice Secret Product',
      price: { amount: 900, currency: 'USD' },
      policy: { duration_days: 30 },
    })
  ).body;
  const license = (
    await a.api('POST', '/api/v1/licenses', { product_id: product.id, customer_email: 'alice-customer@example.com' })
  ).body.license;
  const activation = (
    await a.api('POST', `/api/v1/licenses/${license.key}/activations`, { fingerprint: 'alice-machine' })
  ).body;
  receiver.answer('/alice', 500);
  const endpoint = (await a.api('POST', '/api/v1/webhooks', { url: `${receiver.url}/alice`, events: ['webhook.test'] }))
    .body;
  const delivery = (await a.api('POST', `/api/v1/webhooks/${endpoint.id}/test`)).body;
  // Let it fail for good, so a retry would visibly queue it again.
  await eventually(
    async () =>
      expect((await a.api('GET', `/api/v1/webhooks/${endpoint.id}/deliveries`)).body.data[0].status).toBe('failed'),
    { timeoutMs: 10_000 },
  );
  const session = (
    await a.api('POST', '/api/v1/checkout', { product_id: product.id, success_url: 'https://example.com/thanks' })
  ).body;
  return { ...a, product, license, activation, endpoint, delivery, session };
}

/** Everything of A's that B might try to change, as A's API sees it. */
async function snapshot(a: Awaited<ReturnType<typeof accountA>>) {
  const [product, keys, license, activations, endpoint, deliveries, licenses, sessions] = await Promise.all([
    a.api('GET', `/api/v1/products/${a.product.id}`),
    a.api('GET', `/api/v1/products/${a.product.id}/signing-keys`),
    a.api('GET', `/api/v1/licenses/${a.license.key}`),
    a.api('GET', `/api/v1/licenses/${a.license.key}/activations`),
    a.api('GET', `/api/v1/webhooks/${a.endpoint.id}`),
    a.api('GET', `/api/v1/webhooks/${a.endpoint.id}/deliveries`),
    a.api('GET', '/api/v1/licenses?limit=100'),
    a.api('GET', '/api/v1/checkout?limit=100'),
  ]);
  const strip = (d: { next_attempt_at?: unknown }[]) => d.map(({ next_attempt_at: _, ...rest }) => rest);
  return {
    product: product.body,
    keys: keys.body,
    license: { ...license.body, last_validated_at: null },
    activations: activations.body,
    endpoint: endpoint.body,
    deliveries: strip(deliveries.body.data),
    licenses: licenses.body.data.length,
    sessions: sessions.body.data.length,
  };
}

const expectNotFound = (res: { status: number; html: string }, what: string) => {
  expect({ what, status: res.status }).toEqual({ what, status: 404 });
  expect(res.html).toMatch(/<h1>Not found<\/h1>|There is no such product in this account/);
  expect(res.html).not.toMatch(/alice-customer|Alice Secret Product|alice-machine|\/alice/);
};

it('B cannot see or act on any of A’s objects by changing an id in a URL or a form, and nothing of A’s changes', async () => {
  const a = await accountA();
  const before = await snapshot(a);
  const b = await owner();
  const bProduct = (
    await b.api('POST', '/api/v1/products', { name: 'Bob Product', price: { amount: 500, currency: 'USD' } })
  ).body;
  const bLicense = (
    await b.api('POST', '/api/v1/licenses', { product_id: bProduct.id, customer_email: 'bob-customer@example.com' })
  ).body.license;
  const bEndpoint = (await b.api('POST', '/api/v1/webhooks', { url: `${receiver.url}/bob`, events: ['webhook.test'] }))
    .body;
  const { web, csrf } = b;
  const yes = { _csrf: csrf, confirm: 'yes' };
  const key = a.license.key;

  const gets = [
    `/dashboard/products/${a.product.id}`,
    `/dashboard/products/${a.product.id}/rotate-key`,
    `/dashboard/licenses/${key}`,
    ...['suspend', 'reinstate', 'revoke', 'renew'].map((x) => `/dashboard/licenses/${key}/${x}`),
    `/dashboard/licenses/${key}/activations/${a.activation.id}/deactivate`,
    `/dashboard/licenses/${bLicense.key}/activations/${a.activation.id}/deactivate`,
    `/dashboard/webhooks/${a.endpoint.id}`,
    `/dashboard/webhooks/${a.endpoint.id}/rotate-secret`,
  ];
  for (const path of gets) expectNotFound(await web.get(path), `GET ${path}`);

  const posts: [string, Record<string, string>][] = [
    [
      `/dashboard/products/${a.product.id}`,
      {
        _csrf: csrf,
        name: 'Taken over',
        description: '',
        price_amount: '',
        price_currency: 'USD',
        duration_days: '',
        grace_days: '0',
        max_activations: '',
      },
    ],
    [`/dashboard/products/${a.product.id}/rotate-key`, yes],
    ...['suspend', 'reinstate', 'revoke', 'renew'].map((x): [string, Record<string, string>] => [
      `/dashboard/licenses/${key}/${x}`,
      yes,
    ]),
    [`/dashboard/licenses/${key}/activations/${a.activation.id}/deactivate`, yes],
    [`/dashboard/licenses/${bLicense.key}/activations/${a.activation.id}/deactivate`, yes],
    [`/dashboard/licenses/${key}/file`, { _csrf: csrf, fingerprint: '', ttl_days: '30' }],
    [`/dashboard/licenses/${key}/entitlements`, { _csrf: csrf, entitlements: 'taken-over' }],
    [`/dashboard/licenses/${key}/entitlements`, { _csrf: csrf, entitlements: 'Not A Code' }],
    [`/dashboard/webhooks/${a.endpoint.id}/disable`, { _csrf: csrf }],
    [`/dashboard/webhooks/${a.endpoint.id}/enable`, { _csrf: csrf }],
    [`/dashboard/webhooks/${a.endpoint.id}/test`, { _csrf: csrf }],
    [`/dashboard/webhooks/${a.endpoint.id}/rotate-secret`, yes],
    [`/dashboard/webhooks/${a.endpoint.id}/deliveries/${a.delivery.id}/retry`, { _csrf: csrf }],
    [`/dashboard/webhooks/${bEndpoint.id}/deliveries/${a.delivery.id}/retry`, { _csrf: csrf }],
    // Forms that name A's product in a field.
    ['/dashboard/licenses', { _csrf: csrf, product_id: a.product.id, customer_email: 'sneaky@example.com' }],
    [
      '/dashboard/checkout',
      {
        _csrf: csrf,
        product_id: a.product.id,
        success_url: 'https://example.com/thanks',
        cancel_url: '',
        customer_email: '',
      },
    ],
  ];
  for (const [path, form] of posts) expectNotFound(await web.post(path, form), `POST ${path}`);

  // B's lists and searches show none of A's objects.
  for (const path of [
    '/dashboard',
    '/dashboard/products',
    '/dashboard/licenses',
    `/dashboard/licenses?q=${key}`,
    '/dashboard/licenses?q=alice-customer%40example.com',
    `/dashboard/licenses?product_id=${a.product.id}`,
    '/dashboard/webhooks',
    '/dashboard/checkout',
  ]) {
    const page = await web.get(path);
    expect({ path, status: page.status }).toEqual({ path, status: 200 });
    const shown = page.html.replace(/value="[^"]*"/g, ''); // what B typed into the search form comes back in it
    for (const id of [a.product.id, key, a.endpoint.id, a.session.id, '>alice-customer@example.com<'])
      expect({ path, shows: shown.includes(id) }).toEqual({ path, shows: false });
  }

  expect(await snapshot(a)).toEqual(before);
  // B's own licence kept its state too (the deactivation named B's key with A's machine).
  expect((await b.api('GET', `/api/v1/licenses/${bLicense.key}`)).body.status).toBe('active');
});
