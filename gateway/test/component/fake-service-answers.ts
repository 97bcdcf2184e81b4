import {
  Account,
  type Activation,
  seatFacts,
  generateLicenseKey,
  judge,
  License,
  Product,
  parseLicenseKey,
  policyToContract,
  roleOfScope,
  seenByScope,
  verdictFields,
  withPolicyDefaults,
  policyProblems,
  type AccountServiceService,
  type LicensePolicy,
  type LicenseServiceService,
  type ProductServiceService,
  type StoredStatus,
  type ValidateLicenseRequest,
  type ValidateLicenseResponse,
} from '@licensing/proto';
import { AppError, newId } from '@licensing/runtime';
import type { FakeHandlers } from '@licensing/test-support';

// What the account, product and licence services answer about API keys, products and licences, for a
// few of them held here: the messages of @licensing/proto, judged by the same rules (proto/rules) the licence service
// applies, so the gateway under test sees what it would see from the real services.

export interface FakeVendor {
  account: Account;
  /** A full-scope API key of the account. */
  apiKey: string;
  /** A validate-scope API key of the account (what an app ships with), when it has one. */
  validateKey?: string;
  /** Full-scope keys of lesser roles (developer, support, read_only): the secret → its role. */
  roleKeys?: Record<string, string>;
}

export function fakeVendor(plan = 'enterprise'): FakeVendor {
  const account = Account.fromPartial({
    id: newId('acct'),
    name: `Vendor ${newId('v').slice(-4)}`,
    plan,
    created_at: new Date().toISOString(),
  });
  return { account, apiKey: `lk_full_${newId('k')}`, validateKey: `lk_validate_${newId('k')}` };
}

/** A product with the default policy, as the product service creates it. */
export function fakeProduct(vendor: FakeVendor, name: string): Product {
  return Product.fromPartial({
    id: newId('prod'),
    account_id: vendor.account.id,
    name,
    created_at: new Date().toISOString(),
    policy: policyToContract(withPolicyDefaults(undefined)),
    email_on_purchase: true,
  });
}

const issued = (accountId: string, productId: string, email: string) =>
  License.fromPartial({
    id: newId('lic'),
    account_id: accountId,
    product_id: productId,
    key: generateLicenseKey(),
    customer_email: email,
    status: 'active',
    created_at: new Date().toISOString(),
    policy: policyToContract(withPolicyDefaults(undefined)),
  });

/** An active licence with the default policy (no expiry, no activation required), as the licence service issues it. */
export function fakeLicence(vendor: FakeVendor, productId: string, email: string): License {
  return issued(vendor.account.id, productId, email);
}

/** Authenticate (the vendors' API keys) and GetAccount, as the account service answers them. */
export function accountHandlers(vendors: FakeVendor[]): FakeHandlers<typeof AccountServiceService> {
  return {
    authenticate: ({ secret }) => {
      const vendor = vendors.find(
        (v) => v.apiKey === secret || v.validateKey === secret || v.roleKeys?.[secret] !== undefined,
      );
      if (!vendor) throw new AppError('unauthorized', 'the API key is unknown or revoked');
      const role = vendor.roleKeys?.[secret];
      if (role) return { account: vendor.account, key_id: `key_${role}_${vendor.account.id}`, scope: 'full', role };
      const scope = vendor.apiKey === secret ? 'full' : 'validate';
      return {
        account: vendor.account,
        key_id: `key_${scope === 'full' ? '' : 'validate_'}${vendor.account.id}`,
        scope,
        role: roleOfScope(scope),
      };
    },
    getAccount: ({ id }) => {
      const vendor = vendors.find((v) => v.account.id === id);
      if (!vendor) throw new AppError('not_found', `account ${id} not found`);
      return vendor.account;
    },
  };
}

/** The policy as the product service accepts it: refused (its first problem) by proto/rules, else with its defaults. */
const acceptedPolicy = (p: LicensePolicy | undefined) => {
  const [problem] = p ? policyProblems(p) : [];
  if (problem) throw AppError.invalid(problem.field, problem.message);
  return policyToContract(withPolicyDefaults(p));
};

/**
 * CreateProduct, UpdateProduct, ListProducts (one page) and GetProduct over `products` (the test's array:
 * what a test creates stays there, as in the service's store, across a restart of the fake).
 */
export function productHandlers(products: Product[]): FakeHandlers<typeof ProductServiceService> {
  return {
    updateProduct: (req) => {
      const i = products.findIndex((p) => p.id === req.id && p.account_id === req.account_id);
      if (i < 0) throw new AppError('not_found', `product ${req.id} not found`);
      // A policy given replaces the whole policy (absent fields take their defaults), as the service does.
      const policy = req.policy ? acceptedPolicy(req.policy) : products[i].policy;
      products[i] = Product.fromPartial({ ...products[i], name: req.name ?? products[i].name, policy });
      return products[i];
    },
    createProduct: (req) => {
      const product = Product.fromPartial({
        id: newId('prod'),
        account_id: req.account_id,
        name: req.name,
        description: req.description,
        created_at: new Date().toISOString(),
        policy: acceptedPolicy(req.policy),
        price: req.price,
        email_on_purchase: req.email_on_purchase ?? true,
      });
      products.push(product);
      return product;
    },
    listProducts: ({ account_id }) => ({
      data: products.filter((p) => p.account_id === account_id),
      page: { has_more: false, next_cursor: '' },
    }),
    getProduct: ({ account_id, id }) => {
      const found = products.find((p) => p.id === id && p.account_id === account_id);
      if (!found) throw new AppError('not_found', `product ${id} not found`);
      return found;
    },
  };
}

/** What a fake licence service found for a key: the parsed key, the licence, its active machines, a retired key's end. */
export interface FoundLicence {
  parsed: ReturnType<typeof parseLicenseKey>;
  mine?: License;
  held?: Activation[];
  until?: Date;
}

/**
 * A validation answered as the licence service answers it: judged by proto/rules over what was found
 * (the policy's defaults, the machines' leases at `now`), with the facts a gateway caches when asked.
 */
export function judgedValidation(req: ValidateLicenseRequest, found: FoundLicence, now: Date): ValidateLicenseResponse {
  const { parsed, mine, held = [], until } = found;
  const policy = withPolicyDefaults(mine?.policy);
  const fingerprints = held.map((a) => a.fingerprint);
  const leases = new Map(
    held.filter((a) => a.lease_expires_at).map((a) => [a.fingerprint, Date.parse(a.lease_expires_at)]),
  );
  const facts = mine && {
    account_id: mine.account_id,
    product_id: mine.product_id,
    status: mine.status as StoredStatus,
    expires_at: mine.expires_at ? new Date(mine.expires_at) : null,
    policy,
    extra_entitlements: mine.extra_entitlements,
    retired_until: until ?? null,
  };
  const request = {
    accountId: req.account_id,
    productId: req.product_id,
    fingerprint: req.fingerprint,
    entitlements: req.entitlements,
  };
  const active = { has: (f: string) => fingerprints.includes(f), size: fingerprints.length };
  const verdict = judge(parsed, facts ?? null, request, seatFacts(active, leases, req.fingerprint, now.getTime()), now);
  return {
    ...verdictFields(verdict),
    license: verdict.visible && mine ? seenByScope(mine, req.key_scope, policy.validate_keys_see_email) : undefined,
    facts:
      req.want_facts && parsed.ok
        ? {
            found: !!mine,
            license: mine,
            stored_status: mine?.status ?? '',
            activation_count: fingerprints.length,
            active_fingerprints: fingerprints,
            cacheable: true,
            remembered_since: '',
            active_lease_expires_at: held.map((a) => a.lease_expires_at),
            retired_until: until?.toISOString() ?? '',
          }
        : undefined,
  };
}

/**
 * CreateLicense (an active licence with the default policy), ValidateLicense(s) with the facts a gateway
 * caches, ResolveLicenseKey and RecordValidations, over `licences` (the test's array, as a store).
 */
export function licenseHandlers(licences: License[]): FakeHandlers<typeof LicenseServiceService> {
  const validate = (req: ValidateLicenseRequest): ValidateLicenseResponse => {
    const parsed = parseLicenseKey(req.key);
    const mine = parsed.ok ? licences.find((l) => l.key === parsed.key && l.account_id === req.account_id) : undefined;
    return judgedValidation(req, { parsed, mine }, new Date());
  };
  return {
    createLicense: (req) => {
      const licence = issued(req.account_id, req.product_id, req.customer_email);
      licences.push(licence);
      return licence;
    },
    validateLicense: validate,
    validateLicenses: ({ validations }) => ({ results: validations.map(validate) }),
    resolveLicenseKey: ({ key }) => {
      const found = licences.find((l) => l.key === key);
      return found
        ? {
            found: true,
            account_id: found.account_id,
            license_id: found.id,
            product_id: found.product_id,
            stored_status: found.status,
          }
        : { found: false, account_id: '', license_id: '', product_id: '', stored_status: '' };
    },
    recordValidations: () => ({}),
  };
}
