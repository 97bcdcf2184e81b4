import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AccountServiceService,
  LicenseServiceService,
  NotificationServiceClient,
  ProductServiceService,
  License,
  Product,
} from '@licensing/proto';
import { AppError, createClient, newId } from '@licensing/runtime';
import { type FakePeer, startFakePeer, stopAndDrop } from '@licensing/test-support';
import { start } from '../../src/main';
import { credentialOf, envFor } from '../../../../scripts/lib/topology';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { testTopology } from '../../../../test/support/stack';
import { eventually } from '../../../../test/support/eventually';

// The notification service alone, over gRPC, against real FerretDB and NATS, with the account, product
// and licence services faked at the gRPC boundary: a licence mail asked for is queued for the licence's
// customer as the licence service describes it, then sent (here to a folder) with the product's name,
// the account's support address and the licence file the licence service signs; a licence the licence service does not know, or one with nobody
// to write to, is refused and nothing is queued.

const outbox = join(tmpdir(), `licensing-notification-peers-${newId('t')}`);
const t = testTopology({ customerMailUrl: `dir://${outbox}`, mailSendIntervalMs: 100 });
const account = newId('acct');
const product = Product.fromPartial({ id: newId('prod'), account_id: account, name: 'Editor Pro' });
const licence = (key: string, email: string) =>
  License.fromPartial({
    id: newId('lic'),
    account_id: account,
    product_id: product.id,
    key,
    customer_email: email,
    status: 'active',
  });
const known = new Map([
  ['AAAAA-BBBBB-CCCCC-DDDDD-EEEEE-FFFFF', licence('AAAAA-BBBBB-CCCCC-DDDDD-EEEEE-FFFFF', 'ann@example.com')],
  ['GGGGG-HHHHH-JJJJJ-KKKKK-MMMMM-NNNNN', licence('GGGGG-HHHHH-JJJJJ-KKKKK-MMMMM-NNNNN', '')],
]);

let accounts: FakePeer<typeof AccountServiceService>;
let products: FakePeer<typeof ProductServiceService>;
let licenses: FakePeer<typeof LicenseServiceService>;
let service: Awaited<ReturnType<typeof start>>;
let notifications: ReturnType<typeof createClient<NotificationServiceClient>>;

beforeAll(async () => {
  accounts = await startFakePeer(AccountServiceService, {
    getAccount: ({ id }) => {
      if (id !== account) throw new AppError('not_found', `account ${id} not found`);
      return {
        id,
        name: 'Acme',
        plan: 'pro',
        created_at: '2026-01-01T00:00:00.000Z',
        per_minute_limit: 0,
        per_hour_limit: 0,
        support_email: 'help@acme.example',
        require_mfa: false,
      };
    },
  });
  products = await startFakePeer(ProductServiceService, {
    getProduct: ({ account_id, id }) => {
      if (account_id !== account || id !== product.id) throw new AppError('not_found', `product ${id} not found`);
      return product;
    },
  });
  licenses = await startFakePeer(LicenseServiceService, {
    getLicense: ({ account_id, key }) => {
      const found = known.get(key);
      if (!found || account_id !== account) throw new AppError('not_found', 'licence not found');
      return found;
    },
    // The signed file the mail attaches (the licence service signs it with the product's key).
    issueLicenseFile: ({ key }) => ({
      kid: 'kid_1',
      algorithm: 'Ed25519',
      payload: Buffer.from(key).toString('base64url'),
      signature: 'c2ln',
    }),
  });
  await setUpEvents(t);
  service = await start({
    env: envFor('notification', t, {
      port: 0,
      addrs: { account: accounts.address, product: products.address, license: licenses.address },
    }),
  });
  notifications = createClient(NotificationServiceClient, `127.0.0.1:${service.port}`, credentialOf(t, 'gateway'));
});

afterAll(async () => {
  notifications?.close();
  await stopAndDrop('the notification service', service);
  await Promise.all([accounts?.stop(), products?.stop(), licenses?.stop()]);
  await rm(outbox, { recursive: true, force: true });
});

it("queues a licence's mail to the customer the licence service names, and sends it with the product, account and licence file it reads", async () => {
  const key = 'AAAAA-BBBBB-CCCCC-DDDDD-EEEEE-FFFFF';
  const queued = await notifications.call.sendLicenseEmail({ account_id: account, key, dedupe_key: '' });
  expect(queued).toMatchObject({ to: 'ann@example.com', template: 'purchase', license_key: key });
  expect(licenses.calls[0]).toMatchObject({
    method: 'getLicense',
    caller: 'notification',
    request: { account_id: account, key },
  });
  const sent = await eventually(
    async () => {
      // A call to a method no fake answers would hold the mail back: name it rather than time out.
      expect([...accounts.unfaked, ...products.unfaked, ...licenses.unfaked]).toEqual([]);
      const files = (await readdir(outbox).catch(() => [])).filter((f) => f.endsWith('.json'));
      expect(files).toHaveLength(1);
      return JSON.parse(await readFile(join(outbox, files[0]), 'utf8')) as {
        to: string;
        subject: string;
        text: string;
        attachments?: { content: string }[];
      };
    },
    { timeoutMs: 15_000 },
  );
  expect(sent.to).toBe('ann@example.com');
  expect(sent.subject).toBe('Your licence key for Editor Pro');
  expect(sent.text).toContain(key);
  expect(sent.text).toContain('help@acme.example');
  expect(JSON.parse(sent.attachments?.[0]?.content ?? '{}')).toMatchObject({ kid: 'kid_1', signature: 'c2ln' });
  await eventually(async () => {
    const { data } = await notifications.call.listEmails({ account_id: account, page: undefined });
    expect(data.find((m) => m.id === queued.id)?.status).toBe('sent');
  });
});

it('refuses a licence the licence service does not know (not_found) and one with no customer (conflict), queuing nothing', async () => {
  const unknown = await notifications.call
    .sendLicenseEmail({ account_id: account, key: 'PPPPP-QQQQQ-RRRRR-SSSSS-TTTTT-VVVVV', dedupe_key: '' })
    .catch((e: unknown) => e);
  expect(unknown).toMatchObject({ code: 'not_found', message: 'licence not found' });
  const nobody = await notifications.call
    .sendLicenseEmail({ account_id: account, key: 'GGGGG-HHHHH-JJJJJ-KKKKK-MMMMM-NNNNN', dedupe_key: '' })
    .catch((e: unknown) => e);
  expect(nobody).toMatchObject({ code: 'conflict' });
  const { data } = await notifications.call.listEmails({ account_id: account, page: undefined });
  expect(data.map((m) => m.license_key)).toEqual(['AAAAA-BBBBB-CCCCC-DDDDD-EEEEE-FFFFF']);
});
