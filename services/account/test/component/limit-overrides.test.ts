import { AccountServiceClient } from '@licensing/proto';
import { createClient } from '@licensing/runtime';
import { start } from '../../src/main';
import { credentialOf, envFor } from '../../../../scripts/lib/topology';
import { testTopology } from '../../../../test/support/stack';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { stopAndDrop } from '@licensing/test-support';

// An operator's change of an account's plan and limit overrides, as the account service accepts it
// (over gRPC, against real FerretDB): what the gateway then does with the limits is in
// gateway/test/component/rate-limits.test.ts.

const t = testTopology();
let service: Awaited<ReturnType<typeof start>>;
let operator: ReturnType<typeof createClient<AccountServiceClient>>;

beforeAll(async () => {
  await setUpEvents(t);
  service = await start({ env: envFor('account', t, { port: 0 }) });
  operator = createClient(AccountServiceClient, `127.0.0.1:${service.port}`, credentialOf(t, 'operator'));
});

afterAll(async () => {
  operator?.close();
  await stopAndDrop('the account service', service);
});

it('refuses bad overrides', async () => {
  const a = { accountId: (await operator.call.createAccount({ name: 'Limits', plan: 'free' })).account!.id };
  const admin = operator.call;
  await expect(admin.updateAccount({ id: a.accountId, per_minute_limit: -1 })).rejects.toMatchObject({
    code: 'invalid_request',
  });
  await expect(admin.updateAccount({ id: a.accountId, per_hour_limit: 2_000_000 })).rejects.toMatchObject({
    code: 'invalid_request',
  });
  await expect(admin.updateAccount({ id: a.accountId, plan: 'gold' })).rejects.toMatchObject({
    code: 'invalid_request',
  });
  await expect(admin.updateAccount({ id: a.accountId, plan: '' })).rejects.toMatchObject({
    code: 'invalid_request',
  });
  await expect(admin.updateAccount({ id: a.accountId })).rejects.toMatchObject({ code: 'invalid_request' });
  await expect(admin.updateAccount({ id: 'acct_nope', plan: 'pro' })).rejects.toMatchObject({
    code: 'not_found',
  });
  // A good one is kept, and read back.
  await admin.updateAccount({ id: a.accountId, per_minute_limit: 150, per_hour_limit: 200 });
  expect(await admin.getAccount({ id: a.accountId })).toMatchObject({ per_minute_limit: 150, per_hour_limit: 200 });
});
