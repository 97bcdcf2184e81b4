import { LicensedApp, type LicensingClient } from '@licensing/client';
import { eventually } from '../support/eventually';
import { sdk } from '../support/sdk';
import { startStack, type Stack } from '../support/stack';

// Own stack: its gateway's rate-limit minute is shortened to 30 s (RATE_LIMIT_MINUTE_WINDOW_S).

// Twenty-five copies of an app on one licence of twenty-five floating seats with the shortest lease (30 s):
// each heartbeats every 10 s, a third of its lease. Their heartbeats are budgeted per activation, never
// from the licence's minute (60 per window), which twenty-five seats' 75 heartbeats a window would spend
// (their start, a validation and an activation each, fits in it). The budgets are windows of real time in
// Redis, which the stack's test clock does not move: the gateway's "minute" is shortened to 30 s instead
// (RATE_LIMIT_MINUTE_WINDOW_S, the same budgets over a shorter window), and the run lasts two windows, to
// show that a second window still admits every seat.

const SEATS = 25;
const WINDOW_S = 30;
/** Two whole windows. */
const RUN_MS = 2 * WINDOW_S * 1000;
let stack: Stack;
let vendor: LicensingClient;
const apps: LicensedApp[] = [];

beforeAll(async () => {
  stack = await startStack({}, { RATE_LIMIT_MINUTE_WINDOW_S: String(WINDOW_S) });
  vendor = sdk(stack.url, (await stack.newAccount()).apiKey);
});

afterAll(async () => {
  await Promise.allSettled(apps.map((app) => app.stop()));
  await stack?.stop();
});

it(
  `${SEATS} apps on one licence with lease_seconds 30 heartbeat for two rate-limit windows, and none loses its seat`,
  async () => {
    const product = await vendor.products.create({
      name: 'Floating team app',
      policy: { lease_seconds: 30, max_activations: SEATS },
    });
    const { license_key } = await vendor.licenses.create({
      product_id: product.id,
      customer_email: 'team@example.com',
    });
    const beats = new Array<number>(SEATS).fill(0);
    const errors: string[] = [];
    for (let i = 0; i < SEATS; i++)
      apps.push(
        new LicensedApp({
          baseUrl: stack.url,
          licenseKey: license_key,
          fingerprint: `machine-${i}`,
          maxRetries: 0, // a refused heartbeat must show, not be retried away
          onHeartbeat: () => beats[i]++,
          onError: (err) => errors.push(`machine-${i}: ${err.message}`),
        }),
      );
    const started = await Promise.all(apps.map((app) => app.start()));
    const seats = started.map((s) => s.activation.id);
    expect(new Set(seats).size).toBe(SEATS);
    expect(started.every((s) => s.validation.valid && s.heartbeatEveryMs === 10_000)).toBe(true);
    const since = Date.now();

    // Observed, not slept: every seat's heartbeats arrive, none fails, until two minutes have passed.
    await eventually(
      () => {
        expect(errors).toEqual([]);
        expect(apps.map((app) => app.activation?.id)).toEqual(seats);
        expect(Date.now() - since).toBeGreaterThanOrEqual(RUN_MS);
        expect(Math.min(...beats)).toBeGreaterThanOrEqual(RUN_MS / 10_000 - 1);
      },
      { timeoutMs: RUN_MS + 30_000, intervalMs: 1000 },
    );
    // The licence service agrees: the same twenty seats, every lease still running.
    const listed = [];
    for await (const a of vendor.licenses.activations(license_key, { limit: 100 })) listed.push(a);
    expect(listed.map((a) => a.id).sort()).toEqual([...seats].sort());
    for (const a of listed) expect(Date.parse(String(a.lease_expires_at))).toBeGreaterThan(Date.now());
  },
  RUN_MS + 90_000,
);
