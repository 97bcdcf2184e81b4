import type { License } from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import { client } from '../../../test/support/stack';
import { eventually } from '../../../test/support/eventually';
import { accountHandlers, fakeLicence, fakeVendor } from './fake-service-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';

// POST /api/v1/licenses under an Idempotency-Key whose licence service call outlasts the gateway's
// deadline (GRPC_TIMEOUT_MS, shortened here): the client gets a 503 with Retry-After, the key is free
// again, and the retry with the same key is passed on with that key and answered 201, the same licence
// each time. The licence service is faked: one licence per idempotency key, as the real one issues
// (services/license/test/component/idempotent-issuance.test.ts shows that, with its product service slow);
// the account service keeps the answers of the keys as the real one does (a failed run frees the key).

const vendor = fakeVendor('enterprise');
const licences: License[] = [];
const kept = new Map<string, { status: number; body_json: string; location: string }>();
const running = new Set<string>();
let held: Promise<void> | undefined;
let h: GatewayWithFakeServices;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  const byKey = new Map<string, License>();
  h = await startGatewayWithFakeServices({
    settings: { GRPC_TIMEOUT_MS: '500' },
    handlers: {
      account: {
        ...accountHandlers([vendor]),
        claimRequestKey: ({ account_id, key }) => {
          const answer = kept.get(`${account_id}:${key}`);
          if (answer) return { replay: true, run: '', ...answer };
          if (running.has(`${account_id}:${key}`))
            throw new AppError('conflict', 'a request with this Idempotency-Key is already in progress; retry later');
          running.add(`${account_id}:${key}`);
          return { replay: false, run: newId('run'), status: 0, body_json: '', location: '' };
        },
        renewRequestKey: () => ({}),
        settleRequestKey: ({ account_id, key, succeeded, status, body_json, location }) => {
          running.delete(`${account_id}:${key}`);
          if (succeeded) kept.set(`${account_id}:${key}`, { status, body_json, location });
          return {};
        },
      },
      license: {
        createLicense: async (req) => {
          await held;
          const scope = `${req.account_id}:${req.idempotency_key}`;
          const earlier = req.idempotency_key ? byKey.get(scope) : undefined;
          if (earlier) return earlier;
          const licence = fakeLicence(vendor, req.product_id, req.customer_email);
          licences.push(licence);
          if (req.idempotency_key) byKey.set(scope, licence);
          return licence;
        },
      },
    },
  });
  api = client(h.url, vendor.apiKey);
});

afterAll(async () => {
  await h?.stop();
});

it('REST: a create that ran out of time is issued by the retry with the same key, once', async () => {
  const productId = newId('prod');
  const body = { product_id: productId, customer_email: 'ada@example.com' };
  const key = { 'idempotency-key': `order-${newId('o').slice(-8)}` };
  let release: () => void = () => undefined;
  held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let late: Awaited<ReturnType<typeof api>>;
  try {
    late = await api('POST', '/api/v1/licenses', body, key);
  } finally {
    held = undefined;
    release();
  }
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
  const asked = h.fakes.license.requestsTo('createLicense').filter((r) => r.product_id === productId);
  expect(asked.map((r) => r.idempotency_key)).toEqual(asked.map(() => key['idempotency-key']));
  expect(licences.filter((l) => l.product_id === productId).map((l) => l.key)).toEqual([retried.body.license_key]);
});
