import { client } from '../../../test/support/stack';
import { eventually } from '../../../test/support/eventually';
import { accountHandlers, fakeVendor, productHandlers, type FakeVendor } from './fake-service-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';
import { expectProblem } from '../../../test/support/problem-json';

// A vendor's API key, as the gateway takes it: a missing or malformed Authorization is refused before
// anyone is asked, a key is who the (faked) account service says it is, and a key that service stops
// vouching for stops working within a second, cached or not.

const vendor = fakeVendor();
const vendors: FakeVendor[] = [vendor];
let h: GatewayWithFakeServices;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  h = await startGatewayWithFakeServices({
    handlers: { account: accountHandlers(vendors), product: productHandlers([]) },
  });
  api = client(h.url, vendor.apiKey);
});

afterAll(async () => {
  await h?.stop();
});

it('without Authorization: 401 with WWW-Authenticate: Bearer', async () => {
  const res = await client(h.url)('GET', '/api/v1/products');
  expectProblem(res, 401, 'unauthorized');
  expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
});

it.each([
  ['Basic dXNlcjpwYXNz'],
  ['Bearer'],
  ['Bearer '],
  ['Bearer a b'],
  [`Bearer ${'x'.repeat(300)}`],
  ['token abc'],
])('malformed header %p: 401', async (header) => {
  const res = await client(h.url)('GET', '/api/v1/products', undefined, { authorization: header });
  expectProblem(res, 401, 'unauthorized');
});

it('a revoked key stops working within 1 s, although it was cached', async () => {
  // A second key of the vendor's account, which the account service then stops vouching for.
  const doomedKey: FakeVendor = { account: vendor.account, apiKey: fakeVendor().apiKey };
  vendors.push(doomedKey);
  const doomed = client(h.url, doomedKey.apiKey);
  expect((await doomed('GET', '/api/v1/products')).status).toBe(200); // now cached by the gateway
  expect((await doomed('GET', '/api/v1/products')).status).toBe(200);
  vendors.splice(vendors.indexOf(doomedKey), 1);
  // Polled for at most 1 s: the promise is "within a second", even with no revocation event at all.
  await eventually(async () => expect((await doomed('GET', '/api/v1/products')).status).toBe(401), {
    timeoutMs: 1000,
  });
  expect((await api('GET', '/api/v1/products')).status).toBe(200); // other keys unaffected
});
