import { randomBytes } from 'node:crypto';
import { PAID_GRACE_MS } from '../../services/checkout/src/use-cases/completion';
import { eventually } from '../support/eventually';
import { client, startStack, TestClock, type Stack } from '../support/stack';
import { WebClient } from '../support/web-client';

// A licence issued under an Idempotency-Key whose product look-up outlasts the call's deadline
// (a slow product service, a failover): the retry with the same key issues it once the product
// service answers again, and exactly one licence exists, through REST and through a paid checkout.
// Every caller reaches the product service through a proxy that can hold its answers back.

const clock = new TestClock();
let stack: Stack;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  stack = await startStack({}, { CHECKOUT_REQUESTS_PER_MINUTE: '1000' }, clock, { holdable: ['product'] });
  const acct = await stack.newAccount();
  api = client(stack.url, acct.apiKey);
});

afterAll(async () => {
  await stack?.stop();
});

const newProduct = async (price?: { amount: number; currency: string }) =>
  (
    await api('POST', '/api/v1/products', {
      name: `Held ${randomBytes(2).toString('hex')}`,
      ...(price ? { price } : {}),
    })
  ).body.id as string;

const licencesOf = async (productId: string) =>
  (await api('GET', `/api/v1/licenses?product_id=${productId}&limit=100`)).body.data as {
    key: string;
    customer_email: string;
  }[];

/** The product service's answers are held while `during` runs. */
async function whileProductHeld<T>(during: () => Promise<T>): Promise<T> {
  stack.held.product!.hold();
  try {
    return await during();
  } finally {
    stack.held.product!.release();
  }
}

it('REST: a create that ran out of time is issued by the retry with the same key, once', async () => {
  const productId = await newProduct();
  const body = { product_id: productId, customer_email: 'ada@example.com' };
  const key = { 'idempotency-key': `order-${randomBytes(4).toString('hex')}` };
  const late = await whileProductHeld(() => api('POST', '/api/v1/licenses', body, key));
  expect(late.status).toBe(503);
  expect(late.headers.get('retry-after')).toBeTruthy();
  // A client retrying with the same key is answered (409 only for as long as the first run still ends).
  const retried = await eventually(
    async () => {
      const res = await api('POST', '/api/v1/licenses', body, key);
      expect(res.status).toBe(201);
      return res;
    },
    { timeoutMs: 15_000, intervalMs: 200 },
  );
  const again = await api('POST', '/api/v1/licenses', body, key);
  expect(again.status).toBe(201);
  expect(again.body.license_key).toBe(retried.body.license_key);
  expect((await licencesOf(productId)).map((l) => l.key)).toEqual([retried.body.license_key]);
});

it('checkout: a paid session whose issuance ran out of time gets its licence once the product answers, exactly one', async () => {
  const productId = await newProduct({ amount: 900, currency: 'EUR' });
  const session = (
    await api('POST', '/api/v1/checkout', { product_id: productId, success_url: 'https://vendor.example/thanks' })
  ).body as { id: string };
  const web = new WebClient(stack.url);
  const page = await web.get(`/checkout/${session.id}`);
  const paid = await whileProductHeld(() =>
    web.post(`/checkout/${session.id}/pay`, {
      _csrf: WebClient.csrf(page.html),
      email: 'buyer@example.com',
      card: '4242 4242 4242 4242',
    }),
  );
  expect(paid.status).toBe(503); // paid, but the licence could not be issued in time
  expect(paid.headers.get('retry-after')).toBe('5');
  expect((await api('GET', `/api/v1/checkout/${session.id}`)).body.status).toBe('complete');
  // The sweeper finishes paid sessions left without a licence once they are PAID_GRACE_MS old.
  clock.advance(PAID_GRACE_MS + 1000);
  const key = await eventually(
    async () => {
      const s = (await api('GET', `/api/v1/checkout/${session.id}`)).body as { license_key: string | null };
      expect(s.license_key).toEqual(expect.any(String));
      return s.license_key as string;
    },
    { timeoutMs: 15_000, intervalMs: 200 },
  );
  expect(await licencesOf(productId)).toEqual([expect.objectContaining({ key, customer_email: 'buyer@example.com' })]);
});

it('checkout’s idempotency keys are out of reach of REST keys of the same account', async () => {
  const productId = await newProduct({ amount: 900, currency: 'EUR' });
  const session = (
    await api('POST', '/api/v1/checkout', { product_id: productId, success_url: 'https://vendor.example/thanks' })
  ).body as { id: string };
  // A REST client of the account uses checkout's own key for its session first, with another body.
  const rest = await api(
    'POST',
    '/api/v1/licenses',
    { product_id: productId, customer_email: 'someone-else@example.com' },
    { 'idempotency-key': `checkout:${session.id}` },
  );
  expect(rest.status).toBe(201);
  const web = new WebClient(stack.url);
  const page = await web.get(`/checkout/${session.id}`);
  const paid = await web.post(`/checkout/${session.id}/pay`, {
    _csrf: WebClient.csrf(page.html),
    email: 'buyer@example.com',
    card: '4242 4242 4242 4242',
  });
  expect(paid.status).toBe(303);
  const s = (await api('GET', `/api/v1/checkout/${session.id}`)).body as { license_key: string };
  expect(s.license_key).not.toBe(rest.body.license_key);
  const byEmail = Object.fromEntries((await licencesOf(productId)).map((l) => [l.customer_email, l.key]));
  expect(byEmail).toEqual({ 'buyer@example.com': s.license_key, 'someone-else@example.com': rest.body.license_key });
});
