import {
  Account,
  Activation,
  License,
  LicenseFile,
  SigningKey,
  generateLicenseKey,
  parseLicenseKey,
  policyToContract,
  roleOfScope,
  withPolicyDefaults,
  type AccountServiceService,
  type DomainEvent,
  type LicenseServiceService,
  type ProductServiceService,
} from '@licensing/proto';
import { AppError, EventBus, createLogger, newId } from '@licensing/runtime';
import type { FakeHandlers } from '@licensing/test-support';
import type { Topology } from '../../../scripts/lib/topology';
import { licenseHandlers } from './fake-service-answers';

// What the account, product and licence services answer about credentials, for a world a test holds:
// accounts with any number of API keys of either scope (and operator overrides of their limits), and
// licences with their machines. Keys and licences are looked up as the services look them up (a
// licence of another account is not_found); a transition changes the held licence and its event goes
// on the stream as the licence service's would, so the gateway's caches hear of it.

export interface FakeKey {
  id: string;
  secret: string;
  scope: 'full' | 'validate';
}

export interface FakeAccount {
  account: Account;
  keys: FakeKey[];
}

export function fakeAccount(
  plan = 'pro',
  limits: { per_minute_limit?: number; per_hour_limit?: number } = {},
): FakeAccount {
  const account = Account.fromPartial({
    id: newId('acct'),
    name: `Vendor ${newId('v').slice(-4)}`,
    plan,
    created_at: new Date().toISOString(),
    ...limits,
  });
  const acct: FakeAccount = { account, keys: [] };
  addKey(acct, 'full');
  return acct;
}

/** A new API key of the account, as CreateApiKey makes it: its secret. */
export function addKey(acct: FakeAccount, scope: FakeKey['scope']): string {
  const secret = `lk_${scope === 'full' ? 'full' : 'val'}_${newId('k').slice(2)}`;
  acct.keys.push({ id: newId('key'), secret, scope });
  return secret;
}

/** Authenticate and GetAccount over `accounts` (a key removed from its account is unknown: revoked). */
export function credentialAccountHandlers(accounts: FakeAccount[]): FakeHandlers<typeof AccountServiceService> {
  return {
    authenticate: ({ secret }) => {
      for (const a of accounts) {
        const key = a.keys.find((k) => k.secret === secret);
        if (key) return { account: a.account, key_id: key.id, scope: key.scope, role: roleOfScope(key.scope) };
      }
      throw new AppError('unauthorized', 'the API key is unknown or revoked');
    },
    getAccount: ({ id }) => {
      const found = accounts.find((a) => a.account.id === id);
      if (!found) throw AppError.notFound('account');
      return found.account;
    },
  };
}

/** The products (id → account) whose signing keys ListSigningKeys answers. */
export function signingKeyHandlers(products: Map<string, string>): FakeHandlers<typeof ProductServiceService> {
  return {
    listSigningKeys: ({ account_id, id }) => {
      if (products.get(id) !== account_id) throw AppError.notFound('product');
      return {
        data: [
          SigningKey.fromPartial({
            kid: `kid_${id}`,
            product_id: id,
            algorithm: 'Ed25519',
            public_key_pem: '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n',
            created_at: '2026-01-01T00:00:00.000Z',
            current: true,
          }),
        ],
      };
    },
  };
}

/** Publishes licence events on a topology's stream, as the licence service does. */
export async function licenceEvents(t: Topology) {
  const bus = await EventBus.connect({
    url: t.natsUrl,
    subjectPrefix: t.subjectPrefix,
    stream: t.stream,
    name: 'license',
    log: createLogger('fake-license', 'silent'),
  });
  return {
    publish: (type: 'license.suspended' | 'license.revoked' | 'license.reinstated', l: License) =>
      bus.publish({
        id: newId('evt'),
        type,
        account_id: l.account_id,
        created_at: new Date().toISOString(),
        data: {
          license: {
            id: l.id,
            key: l.key,
            product_id: l.product_id,
            customer_email: l.customer_email,
            status: l.status,
            expires_at: null,
            created_at: l.created_at,
            entitlements: [],
          },
        },
      } as DomainEvent),
    close: () => bus.close(),
  };
}

/**
 * The licence service over `licences` (licenseHandlers' validations and resolutions) with the app
 * routes' calls: reading a licence, its machines and its file, transitions (their events published
 * with `publish`) and rerolls.
 */
export function appLicenseHandlers(
  licences: License[],
  publish: (type: 'license.suspended' | 'license.revoked' | 'license.reinstated', l: License) => Promise<void>,
): FakeHandlers<typeof LicenseServiceService> {
  const machines = new Map<string, Activation[]>();
  const mine = (account_id: string, key: string) => {
    const parsed = parseLicenseKey(key);
    const found = parsed.ok && licences.find((l) => l.key === parsed.key && l.account_id === account_id);
    if (!found) throw AppError.notFound('license');
    return found;
  };
  const machinesOf = (l: License) => machines.get(l.id) ?? machines.set(l.id, []).get(l.id)!;
  const transitions = {
    suspend: ['suspended', 'license.suspended'],
    revoke: ['revoked', 'license.revoked'],
    reinstate: ['active', 'license.reinstated'],
  } as const;
  return {
    ...licenseHandlers(licences),
    getLicense: ({ account_id, key }) => mine(account_id, key),
    activate: ({ account_id, key, fingerprint, name }) => {
      const l = mine(account_id, key);
      const held = machinesOf(l);
      const known = held.find((a) => a.fingerprint === fingerprint);
      if (known) return { activation: known, created: false };
      const activation = Activation.fromPartial({
        id: newId('act'),
        license_id: l.id,
        fingerprint,
        name,
        created_at: new Date().toISOString(),
      });
      held.push(activation);
      return { activation, created: true };
    },
    listActivations: ({ account_id, key }) => ({
      data: machinesOf(mine(account_id, key)),
      page: { has_more: false, next_cursor: '' },
    }),
    deactivate: ({ account_id, key, activation_id }) => {
      const held = machinesOf(mine(account_id, key));
      const i = held.findIndex((a) => a.id === activation_id);
      if (i < 0) throw AppError.notFound('activation');
      return held.splice(i, 1)[0];
    },
    issueLicenseFile: ({ account_id, key, fingerprint }) => {
      const l = mine(account_id, key);
      const payload = Buffer.from(JSON.stringify({ license_id: l.id, fingerprint })).toString('base64url');
      return LicenseFile.fromPartial({
        kid: `kid_${l.product_id}`,
        algorithm: 'Ed25519',
        payload,
        signature: Buffer.alloc(64, 1).toString('base64url'),
      });
    },
    transitionLicense: async ({ account_id, key, action }) => {
      const l = mine(account_id, key);
      if (action === 'renew') return l;
      const [status, event] = transitions[action as keyof typeof transitions];
      l.status = status;
      await publish(event, l);
      return l;
    },
    rerollLicense: ({ account_id, key }) => {
      const l = mine(account_id, key);
      l.key = generateLicenseKey();
      return l;
    },
  };
}

/** A licence of `productId` held by the fake, active, with the default policy. */
export function heldLicence(accountId: string, productId: string, key = generateLicenseKey()): License {
  return License.fromPartial({
    id: newId('lic'),
    account_id: accountId,
    product_id: productId,
    key,
    customer_email: 'buyer@example.com',
    status: 'active',
    created_at: new Date().toISOString(),
    policy: policyToContract(withPolicyDefaults(undefined)),
  });
}
