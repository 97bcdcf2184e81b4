import { LicensingClient } from '@licensing/client';
import { fakeFetch, json } from '../../../../test/support/fake-fetch';

// client.subscriptions.cancel() against a scripted fetch: what it asks the API for, by either spelling.

const BASE = 'https://licensing.example.com';
const SUB = 'sub_01J9ZZZZZZZZZZZZZZZZZZZZZZ';

const sentBy = async (options?: Parameters<LicensingClient['subscriptions']['cancel']>[1]) => {
  const fake = fakeFetch(json(200, { id: SUB, object: 'subscription' }));
  const client = new LicensingClient({ baseUrl: BASE, apiKey: 'lk_test_x', fetch: fake.fetch });
  await client.subscriptions.cancel(SUB, options);
  expect(fake.calls).toHaveLength(1);
  expect(fake.calls[0]).toMatchObject({ method: 'POST', url: `${BASE}/api/v1/subscriptions/${SUB}/cancel` });
  return JSON.parse(String(fake.calls[0].body));
};

it('cancels at the period end unless told otherwise', async () => {
  expect(await sentBy()).toEqual({ at_period_end: true });
  expect(await sentBy({ atPeriodEnd: true })).toEqual({ at_period_end: true });
});

it('cancels now with atPeriodEnd: false, or with the API’s own at_period_end: false', async () => {
  expect(await sentBy({ atPeriodEnd: false })).toEqual({ at_period_end: false });
  expect(await sentBy({ at_period_end: false })).toEqual({ at_period_end: false });
});
