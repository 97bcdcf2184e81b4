import type { Product } from '@licensing/proto';
import { eventually } from '../../../test/support/eventually';
import { productHandlers } from './fake-service-answers';
import { fakeLicenceService } from './fake-licence-service';
import { type GatewayOverFakes, startGatewayOverFakes } from './gateway-over-fakes';

// A floating licence's seats heartbeat on budgets of their own (heartbeats_per_activation_per_minute,
// 10 a window per activation), never on the licence's minute (per_license_per_minute, 60 a window):
// twenty-five seats beating three times a minute (lease_seconds 30, a heartbeat every 10 s) send 75 a
// minute, which the licence's minute would refuse. The budgets are windows of real time in Redis: the
// gateway's "minute" is shortened to a few seconds (RATE_LIMIT_MINUTE_WINDOW_S, the same budgets over a
// shorter window) so that a second window can be shown to admit every seat again. The SDK's cadence
// (a heartbeat every third of the lease): packages/client/test/unit; what the licence service does with
// a heartbeat (the lease): services/license/test/component/floating-seats.test.ts.

const SEATS = 25;
const PER_SEAT = 10;
const WINDOW_S = 8;
const products: Product[] = [];
const licences = fakeLicenceService(products);
let gw: GatewayOverFakes;

beforeAll(async () => {
  gw = await startGatewayOverFakes(
    { product: productHandlers(products), license: licences.handlers },
    // A generous Redis timeout: on a busy machine a command slower than the default 250 ms is judged by the
    // in-memory insurance limiter (by design), which counts only this gateway's share and may refuse early.
    { settings: { RATE_LIMIT_MINUTE_WINDOW_S: String(WINDOW_S), REDIS_TIMEOUT_MS: '5000' } },
  );
});

afterAll(async () => {
  await gw?.stop();
});

/** A heartbeat as the app sends it: with the account's validate-scope key. */
const heartbeat = (key: string, id: string) =>
  gw.request('POST', `/api/v1/licenses/${key}/activations/${id}/heartbeat`, undefined, gw.validateKey);

async function floatingSeats(): Promise<{ key: string; seats: string[] }> {
  const product = await gw.request('POST', '/api/v1/products', {
    name: 'Floating team app',
    policy: { lease_seconds: 30, max_activations: SEATS },
  });
  const license = await gw.request('POST', '/api/v1/licenses', {
    product_id: product.body.id,
    customer_email: 'team@example.com',
  });
  const key = license.body.license_key as string;
  const seats: string[] = [];
  for (let i = 0; i < SEATS; i++) {
    // With the vendor's key, which has a minute of its own: the licence's minute stays whole for the checks below.
    const activation = await gw.request('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: `machine-${i}` });
    expect(activation.status).toBe(201);
    seats.push(activation.body.id);
  }
  return { key, seats };
}

/** Each seat's `count` heartbeats, the seats side by side: the statuses, seat by seat. */
const beatAll = (key: string, seats: string[], count: number) =>
  Promise.all(
    seats.map(async (id) => {
      const statuses: number[] = [];
      for (let i = 0; i < count; i++) statuses.push((await heartbeat(key, id)).status);
      return statuses;
    }),
  );

it(`${SEATS} seats of one licence heartbeat ${PER_SEAT} times each in one window (four times the licence's minute), and the next window admits them all again`, async () => {
  const { key, seats } = await floatingSeats();

  const first = await beatAll(key, seats, PER_SEAT);
  expect(first.flat().filter((s) => s !== 200)).toEqual([]);

  // An eleventh heartbeat in a seat's window is refused, naming the seat's budget.
  const refused = await heartbeat(key, seats[1]);
  expect(refused.status).toBe(429);
  expect(refused.headers.get('ratelimit')).toMatch(/^"heartbeat";r=0;t=\d+$/);
  expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(WINDOW_S);
  // What a heartbeat spends: its activation's budget, never the licence's minute.
  expect(refused.headers.get('ratelimit-policy')).toContain(`"heartbeat";q=${PER_SEAT};w=${WINDOW_S}`);
  expect(refused.headers.get('ratelimit-policy')).not.toContain('license_minute');
  // The licence's minute is whole: the first validation in the window spends its first unit.
  const validated = await gw.request(
    'POST',
    '/api/v1/keys/validate',
    { key, fingerprint: 'machine-1' },
    gw.validateKey,
  );
  expect(validated.status).toBe(200);
  expect(validated.body.valid).toBe(true);
  expect(validated.headers.get('ratelimit')).toMatch(/^"license_minute";r=59;t=\d+$/);

  // The next window (observed, not slept): every seat is admitted again, once, then for the rest of its budget.
  const waiting = new Set(seats);
  await eventually(
    async () => {
      for (const id of [...waiting]) if ((await heartbeat(key, id)).status === 200) waiting.delete(id);
      expect([...waiting]).toEqual([]);
    },
    { timeoutMs: 4 * WINDOW_S * 1000, intervalMs: 500 },
  );
  const second = await beatAll(key, seats, PER_SEAT - 1);
  expect(second.flat().filter((s) => s !== 200)).toEqual([]);
}, 60_000);
