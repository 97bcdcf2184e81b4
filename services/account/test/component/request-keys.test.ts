import { createHash } from 'node:crypto';
import { AccountServiceClient } from '@licensing/proto';
import { createClient } from '@licensing/runtime';
import { start } from '../../src/main';
import { credentialOf, envFor } from '../../../../scripts/lib/topology';
import { testTopology } from '../../../../test/support/stack';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { stopAndDrop } from '@licensing/test-support';

// The request keys of Idempotency-Key, as the account service keeps them for the gateway (over gRPC,
// against real FerretDB): the first claim runs; once it succeeded, the same request is answered again
// from the store; another request with the key is refused (idempotency_key_reused), and so is a second
// claim while the first still runs (conflict); a run that failed frees its key. The gateway's side (the
// routes, the sealed answers): gateway/test/component/idempotency-keys.test.ts.

const t = testTopology();
let service: Awaited<ReturnType<typeof start>>;
let gateway: ReturnType<typeof createClient<AccountServiceClient>>;
let accountId: string;
let n = 0;

beforeAll(async () => {
  await setUpEvents(t);
  service = await start({ env: envFor('account', t, { port: 0 }) });
  gateway = createClient(AccountServiceClient, `127.0.0.1:${service.port}`, credentialOf(t, 'gateway'));
  const operator = createClient(AccountServiceClient, `127.0.0.1:${service.port}`, credentialOf(t, 'operator'));
  accountId = (await operator.call.createAccount({ name: 'Keys', plan: 'pro' })).account!.id;
  operator.close();
});

afterAll(async () => {
  gateway?.close();
  await stopAndDrop('the account service', service);
});

const hashOf = (request: string) => createHash('sha256').update(request).digest('hex');
const freshKey = () => `idem-${Date.now()}-${n++}`;
const claim = (key: string, request: string) =>
  gateway.call.claimRequestKey({ account_id: accountId, key, request_hash: hashOf(request) });

it('answers a succeeded request again, refuses the key for another request, and for a second run while one runs', async () => {
  const key = freshKey();
  const first = await claim(key, 'POST /products {"name":"First body"}');
  expect(first).toMatchObject({ replay: false, run: expect.any(String) });
  await expect(claim(key, 'POST /products {"name":"First body"}')).rejects.toMatchObject({ code: 'conflict' });
  await gateway.call.settleRequestKey({
    account_id: accountId,
    key,
    run: first.run,
    succeeded: true,
    status: 201,
    body_json: '{"id":"prod_1"}',
    location: '/api/v1/products/prod_1',
  });
  expect(await claim(key, 'POST /products {"name":"First body"}')).toMatchObject({
    replay: true,
    status: 201,
    body_json: '{"id":"prod_1"}',
    location: '/api/v1/products/prod_1',
  });
  await expect(claim(key, 'POST /products {"name":"Other body"}')).rejects.toMatchObject({
    code: 'idempotency_key_reused',
  });
  await expect(claim(key, 'POST /exports')).rejects.toMatchObject({ code: 'idempotency_key_reused' });
});

it('a run that failed frees its key, for the same request or another', async () => {
  const key = freshKey();
  const failed = await claim(key, 'POST /products {"name":""}');
  await gateway.call.settleRequestKey({
    account_id: accountId,
    key,
    run: failed.run,
    succeeded: false,
    status: 400,
    body_json: '',
    location: '',
  });
  const retried = await claim(key, 'POST /products {"name":"Fixed"}');
  expect(retried).toMatchObject({ replay: false, run: expect.any(String) });
  expect(retried.run).not.toBe(failed.run);
});

it('keeps keys per account', async () => {
  const key = freshKey();
  await claim(key, 'POST /products {"name":"Mine"}');
  const elsewhere = await gateway.call.claimRequestKey({
    account_id: `${accountId}x`,
    key,
    request_hash: hashOf('POST /products {"name":"Theirs"}'),
  });
  expect(elsewhere.replay).toBe(false);
});
