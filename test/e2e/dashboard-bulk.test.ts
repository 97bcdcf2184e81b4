import { eventually } from '../support/eventually';
import { dashboardOwner, fieldError } from '../support/fixture';
import { openSharedStack, type OpenSharedStack } from '../support/shared-stack';
import { WebClient } from '../support/web-client';

// The dashboard's bulk issuance (a CSV of e-mails) and key reroll (after a confirmation), through the
// running system.
let stack: OpenSharedStack;

beforeAll(async () => {
  stack = await openSharedStack();
});

afterAll(async () => {
  await stack?.close();
});

it('issues a licence to each row of a CSV of e-mails, and shows the job with its keys', async () => {
  const { web, api } = await dashboardOwner(stack, 'bulk');
  const productId = (await api('POST', '/api/v1/products', { name: 'Bulk page' })).body.id as string;
  const form = await web.get('/dashboard/licenses/batch');
  expect(form.status).toBe(200);
  const csrf = WebClient.csrf(form.html);
  const token = /name="batch_token" value="([0-9a-f]{32})"/.exec(form.html)![1];

  // A bad row is named by its line, and nothing is issued.
  const bad = await web.post('/dashboard/licenses/batch', {
    _csrf: csrf,
    batch_token: token,
    product_id: productId,
    emails: 'email,name\nada@example.com,Ada\nnot-an-address,Bob\n',
  });
  expect(bad.status).toBe(400);
  expect(fieldError(bad.html, 'emails')).toContain('line 3 (not-an-address)');
  expect((await api('GET', `/api/v1/licenses?product_id=${productId}`)).body.data).toEqual([]);
  const noProduct = await web.post('/dashboard/licenses/batch', { _csrf: csrf, batch_token: token, emails: 'a@b.io' });
  expect(noProduct.status).toBe(400);
  expect(fieldError(noProduct.html, 'product_id')).toContain('Choose a product');

  const csv = 'email,name\nada@example.com,Ada\nbob@example.com,Bob\n';
  const sent = await web.post('/dashboard/licenses/batch', {
    _csrf: csrf,
    batch_token: token,
    product_id: productId,
    emails: csv,
  });
  expect(sent.status).toBe(303);
  expect(sent.location).toMatch(/^\/dashboard\/licenses\/batch\/lbat_/);
  // The same form sent twice is the same batch.
  const twice = await web.post('/dashboard/licenses/batch', {
    _csrf: csrf,
    batch_token: token,
    product_id: productId,
    emails: csv,
  });
  expect(twice.location).toBe(sent.location);
  const job = await eventually(async () => {
    const p = await web.get(sent.location!);
    expect(p.status).toBe(200);
    expect(p.html).toMatch(/data-testid="batch-status">.*done.*2 of 2 issued/s);
    return p;
  });
  const licences = (await api('GET', `/api/v1/licenses?product_id=${productId}`)).body.data as { key: string }[];
  expect(licences.map((l) => l.key).sort()).toHaveLength(2);
  for (const l of licences) expect(job.html).toContain(l.key);
});

it('gives a licence a new key after a confirmation, the old one working for the grace chosen', async () => {
  const { web, api } = await dashboardOwner(stack, 'reroll');
  const productId = (await api('POST', '/api/v1/products', { name: 'Reroll page' })).body.id as string;
  const oldKey = (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'r@example.com' }))
    .body.license_key as string;
  const detail = await web.get(`/dashboard/licenses/${oldKey}`);
  expect(detail.html).toContain(`href="/dashboard/licenses/${oldKey}/reroll"`);
  const confirm = await web.get(`/dashboard/licenses/${oldKey}/reroll`);
  expect(confirm.status).toBe(200);
  expect(confirm.html).toContain('Give the licence a new key?');
  const csrf = WebClient.csrf(confirm.html);
  // Without the confirmation: the question again, nothing changed.
  const unconfirmed = await web.post(`/dashboard/licenses/${oldKey}/reroll`, { _csrf: csrf, grace_hours: '1' });
  expect(unconfirmed.status).toBe(200);
  expect((await api('GET', `/api/v1/licenses/${oldKey}`)).status).toBe(200);
  for (const grace_hours of ['721', 'soon']) {
    const refused = await web.post(`/dashboard/licenses/${oldKey}/reroll`, {
      _csrf: csrf,
      confirm: 'yes',
      grace_hours,
    });
    expect(refused.status).toBe(400);
    expect(fieldError(refused.html, 'grace_hours')).toBeTruthy();
  }
  const done = await web.post(`/dashboard/licenses/${oldKey}/reroll`, {
    _csrf: csrf,
    confirm: 'yes',
    grace_hours: '1',
  });
  expect(done.status).toBe(303);
  const newKey = done.location!.split('/').pop()!;
  expect(newKey).not.toBe(oldKey);
  expect((await web.get(done.location!)).html).toContain(newKey);
  expect((await api('GET', `/api/v1/licenses/validate?license_key=${oldKey}`)).body).toMatchObject({
    valid: true,
    next_action: 'update_key',
  });
  // A revoked licence has no "New key" button, and the form says why it cannot.
  await api('POST', `/api/v1/licenses/${newKey}/revoke`);
  expect((await web.get(`/dashboard/licenses/${newKey}`)).html).not.toContain(`/dashboard/licenses/${newKey}/reroll"`);
  const revoked = await web.post(`/dashboard/licenses/${newKey}/reroll`, {
    _csrf: csrf,
    confirm: 'yes',
    grace_hours: '0',
  });
  expect(revoked.status).toBe(409);
  expect(revoked.html).toContain('revoked');
});
