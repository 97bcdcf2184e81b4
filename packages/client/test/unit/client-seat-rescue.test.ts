import { LicensedApp, LicensingClient, LicensingError } from '@licensing/client';
import { fakeFetch, json, problem } from '../../../../test/support/fake-fetch';

// The SDK's customer-facing calls against a scripted fetch: seat rescue (LicensedApp.requestSeatRescue() and
// licenses.seatRescue()), a customer's erasure, and the next_action of a refused activation.

const BASE = 'https://licensing.example.com';
const KEY = 'ABCDE-FGHJK-MNPQR-STVWX-YZ012-34567';
const QUEUED = { object: 'seat_rescue', status: 'queued' };

it('requestSeatRescue() posts the seat rescue with the licence credential and resolves with the answer', async () => {
  const fake = fakeFetch(json(202, QUEUED));
  const app = new LicensedApp({
    baseUrl: BASE,
    licenseKey: KEY,
    fingerprint: 'box-1',
    fetch: fake.fetch,
    maxRetries: 0,
  });
  await expect(app.requestSeatRescue()).resolves.toEqual(QUEUED);
  expect(fake.calls).toHaveLength(1);
  expect(fake.calls[0]).toMatchObject({ method: 'POST', url: `${BASE}/api/v1/licenses/${KEY}/seat-rescue` });
  expect(fake.calls[0].headers.authorization).toBe(`License ${KEY}`);
});

it('a second rescue within the hour is a rate_limited error with its wait, and is not retried', async () => {
  const fake = fakeFetch(
    problem(
      429,
      'rate_limited',
      'a seat rescue mail for this licence was sent within the last hour',
      {},
      {
        'retry-after': '3300',
      },
    ),
  );
  const client = new LicensingClient({ baseUrl: BASE, apiKey: 'lk_val_x', fetch: fake.fetch });
  const err = await client.licenses.seatRescue(KEY).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(LicensingError);
  expect(err).toMatchObject({ status: 429, code: 'rate_limited', retryAfterS: 3300 });
  expect(fake.calls).toHaveLength(1);
});

it("a refused activation carries the problem's next_action", async () => {
  const fake = fakeFetch(
    problem(409, 'conflict', 'activation_limit_reached: the licence is already active on 2 machines', {
      next_action: 'free_a_seat',
    }),
  );
  const app = new LicensedApp({
    baseUrl: BASE,
    licenseKey: KEY,
    fingerprint: 'box-3',
    fetch: fake.fetch,
    maxRetries: 0,
  });
  const err = await app.activate().catch((e: unknown) => e);
  expect(err).toMatchObject({ status: 409, nextAction: 'free_a_seat' });
  expect(new LicensingError({ status: 404, code: 'not_found', detail: 'x' }).nextAction).toBeNull();
});

it('customers.erase(email) sends DELETE with the e-mail percent-encoded', async () => {
  const answer = { object: 'customer_erasure', placeholder: 'erased-0123456789abcdef@erased.invalid', erased: 3 };
  const fake = fakeFetch(json(200, answer));
  const client = new LicensingClient({ baseUrl: BASE, apiKey: 'lk_full_x', fetch: fake.fetch });
  await expect(client.customers.erase('Jo+Smith@example.com')).resolves.toEqual(answer);
  expect(fake.calls[0]).toMatchObject({ method: 'DELETE', url: `${BASE}/api/v1/customers/Jo%2BSmith%40example.com` });
  await expect(client.customers.erase('')).rejects.toThrow(TypeError);
});
