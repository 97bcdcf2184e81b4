import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection, type Subscription } from 'nats';
import { AccountServiceClient } from '@licensing/proto';
import { createClient } from '@licensing/runtime';
import { start } from '../../src/main';
import { credentialOf, envFor, type Topology } from '../../../../scripts/lib/topology';
import { type AccountClient, type RunningAccount, startAccount } from './running-account';
import { eventually } from '../../../../test/support/eventually';

// What the account service decides of an API key, over gRPC against real FerretDB and NATS: its shape
// and checksum, the server secret (API_KEY_PEPPER) it was issued under, its revocation (and the
// api_key.revoked event that evicts it from a gateway's cache), the listing of keys, and its refusal
// of a caller without the internal credential. What the gateway makes of these answers (401 problem
// JSON, revocation within a second although cached) is in gateway/test/component/authentication.test.ts.

let svc: RunningAccount;
let t: Topology;
let operator: AccountClient;
let gateway: AccountClient;
let accountId: string;
let firstSecret: string;

beforeAll(async () => {
  svc = await startAccount();
  ({ operator, gateway, topology: t } = svc);
  const created = await operator.call.createAccount({ name: 'Keys', plan: 'pro' });
  accountId = created.account!.id;
  firstSecret = created.secret;
});

afterAll(async () => {
  await svc?.stop();
});

const unauthorized = (secret: string) =>
  expect(gateway.call.authenticate({ secret })).rejects.toMatchObject({ code: 'unauthorized' });

describe('authentication', () => {
  it('an unknown key of the right shape, and a key with a broken checksum: 401', async () => {
    const other = await operator.call.createApiKey({ account_id: accountId, scope: 'full', name: 'tmp' });
    expect(await gateway.call.authenticate({ secret: other.secret })).toMatchObject({ account: { id: accountId } });
    // Same shape, different body: fails the checksum before any look-up.
    const mangled = other.secret.slice(0, 10) + (other.secret[10] === 'a' ? 'b' : 'a') + other.secret.slice(11);
    await unauthorized(mangled);
    await unauthorized('lk_full_notarealkey');
    // A well-formed key issued under another server secret is unknown here, even in this very store:
    // another account service over the same database, with a pepper of its own, issues it.
    const foreign = await start({
      env: envFor('account', { ...t, apiKeyPepper: randomBytes(24).toString('hex') }, { port: 0 }),
    });
    const foreignOperator = createClient(
      AccountServiceClient,
      `127.0.0.1:${foreign.port}`,
      credentialOf(t, 'operator'),
    );
    try {
      const foreignKey = (await foreignOperator.call.createAccount({ name: 'Elsewhere', plan: 'free' })).secret;
      await unauthorized(foreignKey);
    } finally {
      foreignOperator.close();
      await foreign.stop();
    }
  });

  it('a key revoked through the account service stops working within 1 s, although it was cached', async () => {
    const nc: NatsConnection = await connect({ servers: t.natsUrl });
    const heard: Subscription = nc.subscribe(`${t.subjectPrefix}.api_key.revoked`);
    const events: { account_id: string; data: unknown }[] = [];
    void (async () => {
      for await (const msg of heard) events.push(JSON.parse(new TextDecoder().decode(msg.data)));
    })();
    try {
      const { secret, api_key: key } = await operator.call.createApiKey({
        account_id: accountId,
        scope: 'full',
        name: 'to-revoke',
      });
      expect(await gateway.call.authenticate({ secret })).toMatchObject({ key_id: key!.id });
      const revoked = await operator.call.revokeApiKey({ account_id: accountId, key_id: key!.id });
      expect(revoked.revoked_at).not.toBe('');
      // Refused at once by the service; a gateway that cached it hears api_key.revoked (its cache
      // trusts a key for at most 1 s without asking, whether or not the event comes).
      await unauthorized(secret);
      await eventually(() => expect(events.map((e) => e.account_id)).toContain(accountId), { timeoutMs: 1000 });
      // Other keys unaffected.
      expect(await gateway.call.authenticate({ secret: firstSecret })).toMatchObject({ account: { id: accountId } });
    } finally {
      await nc.close();
    }
  });

  it('lists API keys by prefix only and never returns a secret or digest', async () => {
    const out = await operator.call.listApiKeys({ account_id: accountId, page: { limit: 100, starting_after: '' } });
    expect(out.data.length).toBeGreaterThan(0);
    for (const k of out.data) {
      expect(k.prefix).toMatch(/^lk_(full|val)_[0-9A-Za-z]{4}$/);
      expect(JSON.stringify(k)).not.toMatch(/lk_(full|val)_[0-9A-Za-z]{20,}/);
      expect(JSON.stringify(k)).not.toMatch(/[0-9a-f]{64}/);
    }
  });
});

describe('the internal credential', () => {
  it('the gRPC services refuse calls without the internal credential', async () => {
    const intruder = createClient(AccountServiceClient, `127.0.0.1:${svc.port}`, {
      caller: 'gateway',
      token: 'wrong-token',
    });
    await expect(intruder.call.createAccount({ name: 'x', plan: 'free' })).rejects.toMatchObject({
      code: 'unauthorized',
    });
    intruder.close();
  });
});
