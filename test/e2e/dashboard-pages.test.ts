import { randomBytes } from 'node:crypto';
import { client } from '../support/stack';
import { useSharedStack } from '../support/shared-stack';
import { eventually } from '../support/eventually';
import { WebClient } from '../support/web-client';

const shared = useSharedStack();

async function ownerWithKey() {
  const web = new WebClient(shared.stack.url, shared.stack.topology);
  await web.signUp(`owner-${randomBytes(4).toString('hex')}@example.com`);
  const csrf = WebClient.csrf((await web.get('/dashboard/settings')).html);
  const made = await web.post('/dashboard/settings/keys', { _csrf: csrf, name: 'api', scope: 'full' });
  const key = /data-testid="new-key">([^<]+)</.exec(made.html)![1];
  return { web, api: client(shared.stack.url, key) };
}

it('the overview counts licences issued, validations by answer code over 24 h and 30 days, and requests this hour', async () => {
  const { web, api } = await ownerWithKey();
  const productId = (await api('POST', '/api/v1/products', { name: 'Charted' })).body.id;
  const key = (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'Chart@Example.com' }))
    .body.license_key;
  await api('POST', '/api/v1/keys/validate', { key });
  await api('GET', `/api/v1/licenses/validate?license_key=${key}`);
  await api('POST', '/api/v1/keys/validate', { key: 'ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ' });
  // Counts reach the licence service in batches: poll until they have.
  let pages = 2; // Settings and its form (ownerWithKey): the dashboard spends the account's quota too
  const html = await eventually(async () => {
    pages++;
    const page = (await web.get('/dashboard')).html;
    expect(page).toContain('data-testid="validations-24h">3<');
    // Five API requests (two creations, three validations) and every dashboard page so far, this one included.
    expect(page).toContain(`data-testid="requests-this-hour">${5 + pages}</strong> of <strong>100</strong>`);
    return page;
  });
  // Validations with a full-scope key are not app traffic: the apps' allowance is untouched.
  expect(html).toContain('data-testid="app-requests-this-hour">0</strong> of <strong>1,000</strong>');
  expect(html).toContain('data-testid="licenses-count">1<');
  expect(html).toContain('3 in all, 2 valid, 1 key not found');
  expect(html).toContain('data-testid="validations-30d">3<');
  expect(html).toMatch(/<li data-code="valid">.*valid: <strong>2<\/strong><\/li>/);
  expect(html).toMatch(/<li data-code="not_found">.*key not found: <strong>1<\/strong><\/li>/);
  expect(html).toContain(key);
});

it('finds licences by key (typed loosely) or customer e-mail, and never another account’s', async () => {
  const { web, api } = await ownerWithKey();
  const productId = (await api('POST', '/api/v1/products', { name: 'Searchable' })).body.id;
  const key = (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'Finder@Example.com' }))
    .body.license_key as string;
  const row = `data-license-key="${key}"`;
  expect((await web.get(`/dashboard/licenses?q=${encodeURIComponent(key.toLowerCase())}`)).html).toContain(row);
  expect((await web.get('/dashboard/licenses?q=finder%40example.com')).html).toContain(row);
  expect((await web.get('/dashboard/licenses?q=nobody%40example.com')).html).toContain(
    'No licences for nobody@example.com',
  );
  expect((await web.get('/dashboard/licenses?q=NOT-A-KEY')).html).toContain('No licence with this key');

  const other = await ownerWithKey();
  const theirs = (await other.web.get(`/dashboard/licenses?q=${key}`)).html;
  expect(theirs).toContain('No licence with this key');
  expect(theirs).not.toContain(row);
  expect((await other.web.get('/dashboard/licenses?q=finder%40example.com')).html).not.toContain(row);
  expect((await other.web.get('/dashboard/products')).html).not.toContain('Searchable');
  expect((await web.get('/dashboard/products')).html).toContain('Searchable');
});

it('GET /api/v1/licenses filters by customer e-mail, case-insensitively', async () => {
  const { api } = await ownerWithKey();
  const productId = (await api('POST', '/api/v1/products', { name: 'Filter' })).body.id;
  await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'Mixed.Case@Example.com' });
  await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'someone@example.com' });
  const res = await api('GET', '/api/v1/licenses?customer_email=mixed.case%40example.com');
  expect(res.body.data.map((l: { customer_email: string }) => l.customer_email)).toEqual(['Mixed.Case@Example.com']);
  expect((await api('GET', `/api/v1/licenses?customer_email=${'a'.repeat(255)}`)).status).toBe(400);
});

it('unknown dashboard pages are a 404 page, and the assets are served', async () => {
  const web = new WebClient(shared.stack.url, shared.stack.topology);
  expect((await web.get('/dashboard/nope')).status).toBe(404);
  const css = await web.get('/dashboard/assets/app.css');
  expect(css.status).toBe(200);
  expect(css.headers.get('content-type')).toMatch(/text\/css/);
  expect((await web.get('/dashboard')).location).toBe('/dashboard/signin');
});

it('lists page with "Next page" and keep their search and filter on the next page', async () => {
  const { web, api } = await ownerWithKey();
  const productId = (await api('POST', '/api/v1/products', { name: 'Many' })).body.id;
  for (let i = 0; i < 27; i++)
    expect(
      (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'bulk@example.com' })).status,
    ).toBe(201);
  const rows = (html: string) => html.match(/data-license-key="/g)?.length ?? 0;
  const first = await web.get('/dashboard/licenses?q=bulk%40example.com');
  expect(rows(first.html)).toBe(25);
  const next = /<a href="([^"]+)" rel="next">Next page<\/a>/.exec(first.html)![1].replace(/&amp;/g, '&');
  expect(next).toMatch(/^\/dashboard\/licenses\?q=bulk%40example.com&starting_after=lic_/);
  const second = await web.get(next);
  expect(rows(second.html)).toBe(2);
  expect(second.html).not.toContain('rel="next"');
  expect(second.html).toContain('>First page</a>');
});
