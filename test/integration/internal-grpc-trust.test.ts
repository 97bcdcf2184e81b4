import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccountServiceClient, LicenseServiceClient, ProductServiceClient } from '@licensing/proto';
import { createClient, tokenDigest } from '@licensing/runtime';
import { start as startAccount } from '../../services/account/src/main';
import { start as startProduct } from '../../services/product/src/main';
import { start as startLicense } from '../../services/license/src/main';
import { credentialOf, envFor } from '../../scripts/lib/topology';
import { setUpEvents } from '../../scripts/lib/events-setup';
import { testTopology } from '../support/stack';

// Each caller has its own credential and each service an allow-list per caller:
// the account and product services alone, over plaintext and over mTLS with the
// certificates deploy/make-secrets.sh makes.
const secretsDir = mkdtempSync(join(tmpdir(), 'licensing-test-secrets-'));
execFileSync('sh', [join(__dirname, '../../deploy/make-secrets.sh')], {
  env: { ...process.env, SECRETS_DIR: secretsDir },
  stdio: 'ignore',
});

const plain = testTopology();
const tls = testTopology({ grpcTlsDir: secretsDir });
const running: Array<{ ctx: { db: { dropDatabase(): Promise<unknown> } }; stop(): Promise<void> }> = [];
const clients: Array<{ close(): void }> = [];
const addr = (s: { port: number }) => `127.0.0.1:${s.port}`;

function accountClient(address: string, credential: Parameters<typeof createClient>[2]) {
  const c = createClient(AccountServiceClient, address, credential, 3000);
  clients.push(c);
  return c.call;
}

let account: string;
let product: string;
let license: string;
let tlsAccount: string;

beforeAll(async () => {
  await setUpEvents(plain);
  await setUpEvents(tls);
  const a = await startAccount({ env: envFor('account', plain, { port: 0 }) });
  const p = await startProduct({ env: envFor('product', plain, { port: 0 }) });
  const t = await startAccount({ env: envFor('account', tls, { port: 0 }) });
  // The webhook service is called only by an import of an export, which nothing here runs: no one listens there.
  const l = await startLicense({
    env: envFor('license', plain, { port: 0, addrs: { product: addr(p), webhook: '127.0.0.1:9' } }),
  });
  running.push(a, p, t, l);
  [account, product, tlsAccount, license] = [addr(a), addr(p), addr(t), addr(l)];
});

afterAll(async () => {
  for (const c of clients) c.close();
  for (const s of running) {
    await s.ctx.db.dropDatabase().catch(() => undefined);
    await s.stop();
  }
  rmSync(secretsDir, { recursive: true, force: true });
});

describe('per-caller credentials', () => {
  it('refuses a caller the service does not know: checkout may not call the account service at all', async () => {
    await expect(
      accountClient(account, credentialOf(plain, 'checkout')).createAccount({ name: 'x', plan: 'free' }),
    ).rejects.toMatchObject({ code: 'unauthorized' });
  });

  it("refuses one caller's token presented under another caller's name", async () => {
    const stolen = { caller: 'operator' as const, token: credentialOf(plain, 'gateway').token };
    await expect(accountClient(account, stolen).createAccount({ name: 'x', plan: 'free' })).rejects.toMatchObject({
      code: 'unauthorized',
    });
  });

  it("refuses a method outside the caller's allow-list: the gateway may not change plans, checkout may not touch products", async () => {
    const gateway = accountClient(account, credentialOf(plain, 'gateway'));
    await expect(gateway.updateAccount({ id: 'acct_x', plan: 'enterprise' })).rejects.toMatchObject({
      code: 'forbidden',
      message: 'gateway may not call UpdateAccount',
    });
    await expect(gateway.createAccount({ name: 'x', plan: 'free' })).rejects.toMatchObject({ code: 'forbidden' });
    const checkout = createClient(ProductServiceClient, product, credentialOf(plain, 'checkout'), 3000);
    clients.push(checkout);
    await expect(checkout.call.updateProduct({ accountId: 'acct_x', id: 'prod_x' } as never)).rejects.toMatchObject({
      code: 'forbidden',
    });
    // ...while the method it needs is let through (and answers not_found for a product that does not exist).
    await expect(checkout.call.getProduct({ account_id: 'acct_x', id: 'prod_x' })).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it('checkout may only revoke or suspend a licence (a refund or chargeback), never reinstate or renew one', async () => {
    const checkout = createClient(LicenseServiceClient, license, credentialOf(plain, 'checkout'), 3000);
    clients.push(checkout);
    const key = { account_id: 'acct_x', key: 'AAAAA-BBBBB-CCCCC-DDDDD-EEEEE-FFFFF' };
    for (const action of ['reinstate', 'renew'])
      await expect(checkout.call.transitionLicense({ ...key, action })).rejects.toMatchObject({
        code: 'forbidden',
        message: `checkout may not ${action} a licence (only revoke, suspend)`,
      });
    // The transitions it needs are let through (not_found: no such licence).
    for (const action of ['revoke', 'suspend'])
      await expect(checkout.call.transitionLicense({ ...key, action })).rejects.toMatchObject({ code: 'not_found' });
    // ...and the gateway (the vendor's own calls) may make every transition.
    const gateway = createClient(LicenseServiceClient, license, credentialOf(plain, 'gateway'), 3000);
    clients.push(gateway);
    await expect(gateway.call.transitionLicense({ ...key, action: 'reinstate' })).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it("the notification service may not list any account's licences: it asks only whether an address holds one", async () => {
    const notification = createClient(LicenseServiceClient, license, credentialOf(plain, 'notification'), 3000);
    const gateway = createClient(LicenseServiceClient, license, credentialOf(plain, 'gateway'), 3000);
    clients.push(notification, gateway);
    const accountId = `acct_holds${Date.now()}`;
    const { id: productId } = await createClient(
      ProductServiceClient,
      product,
      credentialOf(plain, 'gateway'),
      3000,
    ).call.createProduct({ account_id: accountId, name: 'Held' } as never);
    await gateway.call.createLicense({
      account_id: accountId,
      product_id: productId,
      customer_email: 'Buyer@Example.com',
    } as never);
    await expect(
      notification.call.listLicenses({
        account_id: accountId,
        customer_email: 'buyer@example.com',
        page: { limit: 1, starting_after: '' },
        product_id: '',
        status: '',
      }),
    ).rejects.toMatchObject({ code: 'forbidden', message: 'notification may not call ListLicenses' });
    expect(await notification.call.holdsLicences({ account_id: accountId, email: 'buyer@example.com' })).toEqual({
      holds: true,
    });
    expect(await notification.call.holdsLicences({ account_id: accountId, email: 'other@example.com' })).toEqual({
      holds: false,
    });
    // Another account's customer holds none of this one's.
    expect(await notification.call.holdsLicences({ account_id: 'acct_other', email: 'buyer@example.com' })).toEqual({
      holds: false,
    });
    await expect(
      notification.call.holdsLicences({ account_id: accountId, email: `${'a'.repeat(250)}@example.com` }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('lets each caller call its own methods', async () => {
    const operator = accountClient(account, credentialOf(plain, 'operator'));
    const created = await operator.createAccount({ name: 'Trusted', plan: 'pro' });
    const gateway = accountClient(account, credentialOf(plain, 'gateway'));
    expect(await gateway.authenticate({ secret: created.secret })).toMatchObject({
      account: { id: created.account!.id },
    });
  });

  it("refuses the gateway what only the web component's pages call (sign-in, key regeneration, the audit list, statistics); lets web call them", async () => {
    const operator = accountClient(account, credentialOf(plain, 'operator'));
    const created = await operator.createAccount({ name: 'Pages', plan: 'free' });
    const accountId = created.account!.id;
    const page = { limit: 10, starting_after: '' };
    const gateway = accountClient(account, credentialOf(plain, 'gateway'));
    await expect(gateway.signIn({ email: 'a@example.com', password: 'x' } as never)).rejects.toMatchObject({
      code: 'forbidden',
      message: 'gateway may not call SignIn',
    });
    // The gateway lists, makes and revokes keys for /api/v1/api-keys, within the calling key's role; the
    // dashboard's other key and audit methods stay the web component's.
    await expect(gateway.regenerateApiKey({ account_id: accountId, key_id: 'key_x' } as never)).rejects.toMatchObject({
      code: 'forbidden',
      message: 'gateway may not call RegenerateApiKey',
    });
    await expect(gateway.listAuditEntries({ account_id: accountId, limit: 10 })).rejects.toMatchObject({
      code: 'forbidden',
      message: 'gateway may not call ListAuditEntries',
    });
    const licences = createClient(LicenseServiceClient, license, credentialOf(plain, 'gateway'), 3000);
    clients.push(licences);
    await expect(licences.call.getStats({ account_id: accountId } as never)).rejects.toMatchObject({
      code: 'forbidden',
      message: 'gateway may not call GetStats',
    });
    await expect(licences.call.deactivateForCustomer({ account_id: accountId } as never)).rejects.toMatchObject({
      code: 'forbidden',
      message: 'gateway may not call DeactivateForCustomer',
    });
    // The web component, whose pages they are, is let through.
    const web = accountClient(account, credentialOf(plain, 'web'));
    expect((await web.listApiKeys({ account_id: accountId, page })).data).toHaveLength(1);
    expect((await web.listAuditEntries({ account_id: accountId, limit: 10 })).data).toHaveLength(1);
  });

  it('never revokes an API key without an account: an empty account id is invalid', async () => {
    const operator = accountClient(account, credentialOf(plain, 'operator'));
    const created = await operator.createAccount({ name: 'Scoped', plan: 'free' });
    const keys = await operator.listApiKeys({
      account_id: created.account!.id,
      page: { limit: 10, starting_after: '' },
    });
    const keyId = keys.data[0].id;
    await expect(operator.revokeApiKey({ account_id: '', key_id: keyId, actor: '' })).rejects.toMatchObject({
      code: 'invalid_request',
      fieldErrors: [{ field: 'account_id' }],
    });
    await expect(
      operator.revokeApiKey({ account_id: 'acct_someone_else', key_id: keyId, actor: '' }),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
    const gateway = accountClient(account, credentialOf(plain, 'gateway'));
    expect(await gateway.authenticate({ secret: created.secret })).toMatchObject({
      account: { id: created.account!.id },
    });
  });
});

describe('mTLS (certificates from deploy/make-secrets.sh)', () => {
  it('serves a caller with its certificate and token', async () => {
    const operator = accountClient(tlsAccount, credentialOf(tls, 'operator'));
    const created = await operator.createAccount({ name: 'Over mTLS', plan: 'free' });
    expect(created.account!.id).toMatch(/^acct_/);
  });

  it("refuses a plaintext caller, and a token whose caller is not the certificate's", async () => {
    const noCert = { caller: 'operator' as const, token: credentialOf(tls, 'operator').token };
    await expect(accountClient(tlsAccount, noCert).createAccount({ name: 'x', plan: 'free' })).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    // The gateway's certificate with the operator's token: the token alone is not enough.
    const mixed = { ...credentialOf(tls, 'operator'), tls: credentialOf(tls, 'gateway').tls };
    await expect(accountClient(tlsAccount, mixed).createAccount({ name: 'x', plan: 'free' })).rejects.toMatchObject({
      code: 'unauthorized',
    });
  });
});

describe('text the store cannot hold', () => {
  it('is refused by the service itself, whoever calls, naming the field; line breaks pass', async () => {
    const operator = accountClient(account, credentialOf(plain, 'operator'));
    await expect(operator.createAccount({ name: 'Acme\u0000Corp', plan: 'free' })).rejects.toMatchObject({
      code: 'invalid_request',
      fieldErrors: [{ field: 'name', message: expect.stringContaining('(found U+0000)') }],
    });
    const created = await operator.createAccount({ name: 'Text rules', plan: 'free' });
    const products = createClient(ProductServiceClient, product, credentialOf(plain, 'gateway'), 3000);
    clients.push(products);
    const accountId = created.account!.id;
    for (const [description, code] of [
      ['a\u007fb', 'U+007F'],
      ['a\u001bb', 'U+001B'],
      ['\uffff', 'U+FFFF'],
    ])
      await expect(
        products.call.createProduct({
          account_id: accountId,
          name: 'P',
          description,
          policy: undefined,
          price: undefined,
        }),
      ).rejects.toMatchObject({
        code: 'invalid_request',
        fieldErrors: [{ field: 'description', message: expect.stringContaining(`(found ${code})`) }],
      });
    const made = await products.call.createProduct({
      account_id: accountId,
      name: 'P',
      description: 'two\nlines\tand a tab',
      policy: undefined,
      price: undefined,
    });
    expect(made.description).toBe('two\nlines\tand a tab');
  });
});

describe('rotating a caller token with an overlap (docs/operations.md, "Rotating secrets")', () => {
  it('accepts the old and the new token while both digests are listed, then only the new one', async () => {
    const next = `${credentialOf(plain, 'operator').token}-next`;
    const env = envFor('account', plain, { port: 0 });
    const both = await startAccount({
      env: { ...env, INTERNAL_CALLERS: `${env.INTERNAL_CALLERS},operator=${tokenDigest(next)}` },
    });
    running.push(both);
    const old = accountClient(addr(both), credentialOf(plain, 'operator'));
    const renewed = accountClient(addr(both), { caller: 'operator', token: next });
    // Pods of the caller on either side of its rollout: every call is accepted.
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? old : renewed).createAccount({ name: `r${i}`, plan: 'free' })),
    );
    // The new token is the operator's only: under another caller's name it is refused.
    await expect(
      accountClient(addr(both), { caller: 'gateway', token: next }).createAccount({ name: 'x', plan: 'free' }),
    ).rejects.toMatchObject({ code: 'unauthorized' });
    // The overlap ends: only the new digest.
    const callers = env.INTERNAL_CALLERS.split(',').filter((c) => !c.startsWith('operator='));
    const after = await startAccount({
      env: { ...env, INTERNAL_CALLERS: [...callers, `operator=${tokenDigest(next)}`].join(',') },
    });
    running.push(after);
    await expect(
      accountClient(addr(after), credentialOf(plain, 'operator')).createAccount({ name: 'x', plan: 'free' }),
    ).rejects.toMatchObject({ code: 'unauthorized' });
    await expect(
      accountClient(addr(after), { caller: 'operator', token: next }).createAccount({ name: 'y', plan: 'free' }),
    ).resolves.toBeDefined();
  });
});
