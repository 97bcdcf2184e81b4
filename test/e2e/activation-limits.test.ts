import { client, startStack, type Stack } from '../support/stack';

// Activation is bounded work: one count refuses a full licence, then a few
// rounds of one read and one unique insert. Unique (license_id, slot) inserts
// hold max_activations under concurrency.

let stack: Stack;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  stack = await startStack();
  const acct = await stack.newAccount();
  await stack.admin.updateAccount({ id: acct.accountId, per_minute_limit: 100_000 });
  api = client(stack.url, acct.apiKey);
});

afterAll(async () => {
  await stack?.stop();
});

async function licenseWith(maxActivations: number): Promise<string> {
  const product = (
    await api('POST', '/api/v1/products', {
      name: `Max ${maxActivations}`,
      policy: { max_activations: maxActivations },
    })
  ).body.id;
  return (await api('POST', '/api/v1/licenses', { product_id: product, customer_email: 'a@example.com' })).body
    .license_key;
}

const activate = (key: string, fingerprint: string) =>
  api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint });

it.each([3, 10])('10 concurrent activations of a licence with max_activations %i never exceed it', async (max) => {
  const key = await licenseWith(max);
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => activate(key, `machine-${i}`)));
  const created = results.filter((r) => r.status === 201).length;
  expect(results.every((r) => r.status === 201 || r.status === 409)).toBe(true);
  expect(created).toBeLessThanOrEqual(max);
  const listed = (await api('GET', `/api/v1/licenses/${key}/activations?limit=100`)).body.data.length;
  expect(listed).toBe(created);
  if (max === 3) expect(created).toBe(3);
  // Whatever lost a race can try again and gets the slots that are left.
  for (let i = 0; i < 10 && listed < max; i++) await activate(key, `machine-${i}`);
  expect((await api('GET', `/api/v1/licenses/${key}/activations?limit=100`)).body.data.length).toBe(max);
  expect((await activate(key, 'one-too-many')).status).toBe(409);
});

it('a licence with max_activations 10,000 activates, answers a retry with the same activation, and finds a freed slot again', async () => {
  const key = await licenseWith(10_000);
  const first = await activate(key, 'machine-a');
  expect(first.status).toBe(201);
  expect((await activate(key, 'machine-a')).status).toBe(200); // a retry is not a second activation
  expect((await api('DELETE', `/api/v1/licenses/${key}/activations/${first.body.id}`)).status).toBe(204);
  expect((await activate(key, 'machine-b')).status).toBe(201);
});
