import type { DomainEvent } from '@licensing/proto';
import { EXAMPLE_LICENSE_KEY } from '@licensing/proto';
import { AppError } from '@licensing/runtime';
import type { Clients } from '../../src/backends/clients';
import type { EventFeed } from '../../src/backends/event-feed';
import { LicenseCredentials, licenseDigest } from '../../src/auth/license-credentials';

// The gateway's memory of licence credentials: exact through the events that change what a licence
// may do, and deaf to those that do not (activations come and go all day).

/** A connected feed whose events the test emits: followed (license.*) and subscribed (account.updated). */
class FakeFeed {
  private followed?: (e: DomainEvent) => void;
  private subscribed = new Map<string, (e: DomainEvent) => void>();
  follow(_types: string[], handler: (e: DomainEvent) => void) {
    this.followed = handler;
    return { connected: true, onStatus: () => undefined };
  }
  subscribe(type: string, handler: (e: DomainEvent) => void) {
    this.subscribed.set(type, handler);
  }
  emit(type: string, accountId: string, data: unknown) {
    const event = { id: 'evt_1', type, account_id: accountId, created_at: '', data } as DomainEvent;
    (type.startsWith('license.') ? this.followed : this.subscribed.get(type))!(event);
  }
}

function setUp() {
  const feed = new FakeFeed();
  let status = 'active';
  let found = true;
  let plan = 'pro';
  const calls = { resolve: 0, account: 0 };
  const clients = {
    licenses: {
      resolveLicenseKey: async () => {
        calls.resolve++;
        return found
          ? { found, account_id: 'acct_1', license_id: 'lic_1', product_id: 'prod_1', stored_status: status }
          : { found, account_id: '', license_id: '', product_id: '', stored_status: '' };
      },
    },
    accounts: {
      getAccount: async () => {
        calls.account++;
        return { id: 'acct_1', name: 'A', plan, created_at: '', per_minute_limit: 0, per_hour_limit: 0 };
      },
    },
  } as unknown as Pick<Clients, 'licenses' | 'accounts'>;
  const credentials = new LicenseCredentials(clients, feed as unknown as EventFeed);
  const change = (s: { status?: string; found?: boolean; plan?: string }) => {
    status = s.status ?? status;
    found = s.found ?? found;
    plan = s.plan ?? plan;
  };
  return { feed, credentials, calls, change };
}

const KEY = EXAMPLE_LICENSE_KEY;
const licenseData = { license: { key: KEY } };

describe('licence credentials', () => {
  it('resolve a key once, then answer from memory with the licence, its product and its account', async () => {
    const { credentials, calls } = setUp();
    const p = await credentials.principalOf(KEY);
    expect(p).toMatchObject({
      accountId: 'acct_1',
      plan: 'pro',
      scope: 'validate',
      credential: 'license',
      license: { key: KEY, id: 'lic_1', productId: 'prod_1', status: 'active', digest: licenseDigest(KEY) },
    });
    expect(await credentials.principalOf(KEY)).toBe(p);
    expect(credentials.get(licenseDigest(KEY))).toBe(p);
    expect(calls).toEqual({ resolve: 1, account: 1 });
  });

  it.each(['license.suspended', 'license.revoked', 'license.reinstated', 'license.updated'])(
    '%s evicts the licence: the next request sees its new status',
    async (type) => {
      const { feed, credentials, change } = setUp();
      await credentials.principalOf(KEY);
      change({ status: 'suspended' });
      feed.emit(type, 'acct_1', licenseData);
      expect(credentials.get(licenseDigest(KEY))).toBeUndefined();
      expect((await credentials.principalOf(KEY)).license!.status).toBe('suspended');
    },
  );

  it('activations do not evict (they change nothing a credential holds)', async () => {
    const { feed, credentials, calls } = setUp();
    await credentials.principalOf(KEY);
    feed.emit('license.activated', 'acct_1', licenseData);
    feed.emit('license.deactivated', 'acct_1', licenseData);
    await credentials.principalOf(KEY);
    expect(calls.resolve).toBe(1);
  });

  it('an unknown key is remembered until a licence with it is created', async () => {
    const { feed, credentials, change } = setUp();
    change({ found: false });
    expect((await credentials.principalOf(KEY)).license!.status).toBe('unknown');
    change({ found: true });
    expect((await credentials.principalOf(KEY)).license!.status).toBe('unknown');
    feed.emit('license.created', 'acct_1', licenseData);
    expect((await credentials.principalOf(KEY)).license!.status).toBe('active');
  });

  it("account.updated drops the account's licences: a new plan applies on the next request", async () => {
    const { feed, credentials, change } = setUp();
    await credentials.principalOf(KEY);
    change({ plan: 'enterprise' });
    feed.emit('account.updated', 'acct_1', { account: { id: 'acct_1' } });
    expect((await credentials.principalOf(KEY)).plan).toBe('enterprise');
  });

  it('a look-up in flight when an eviction arrives is answered but not remembered', async () => {
    const { feed, credentials, calls } = setUp();
    const pending = credentials.principalOf(KEY);
    feed.emit('license.suspended', 'acct_1', licenseData);
    await pending;
    expect(credentials.get(licenseDigest(KEY))).toBeUndefined();
    await credentials.principalOf(KEY);
    expect(calls.resolve).toBe(2);
  });

  it('an account the account service no longer has makes the key unknown; other errors pass through', async () => {
    const feed = new FakeFeed();
    const failing = (err: AppError) =>
      new LicenseCredentials(
        {
          licenses: {
            resolveLicenseKey: async () => ({
              found: true,
              account_id: 'acct_9',
              license_id: 'lic_9',
              product_id: 'prod_9',
              stored_status: 'active',
            }),
          },
          accounts: {
            getAccount: async () => {
              throw err;
            },
          },
        } as unknown as Pick<Clients, 'licenses' | 'accounts'>,
        feed as unknown as EventFeed,
      );
    expect((await failing(AppError.notFound('account')).principalOf(KEY)).license!.status).toBe('unknown');
    await expect(failing(new AppError('service_unavailable', 'away')).principalOf(KEY)).rejects.toMatchObject({
      code: 'service_unavailable',
    });
  });
});
