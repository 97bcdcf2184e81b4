import { AppError, isId } from '@licensing/runtime';
import { EMAIL_MAX_LENGTH, isOneOf, licenseStatuses, parseLicenseKey, type PageRequest } from '@licensing/proto';
import { DAY_MS } from '../domain/stats';
import type { LicenseDoc } from '../store/models';
import type { LicenseStore } from '../store/queries';
import { rerolledFrom } from '../store/retired-keys';
import type { ValidationCounter } from '../jobs/validation-counter';
import type { LicenseDeps } from './deps';
import { withLiveEntitlements, withLiveEntitlementsAll } from './product-entitlements';

/** The caller's licence by key (typed loosely), or 404 for a typo, an unknown key or another account's. */
export async function ownLicense(
  store: Pick<LicenseStore, 'findInAccount'>,
  accountId: string,
  key: string,
): Promise<LicenseDoc> {
  const parsed = parseLicenseKey(key);
  const doc = parsed.ok ? await store.findInAccount(accountId, parsed.key) : null;
  if (!doc) throw AppError.notFound('licence');
  return doc;
}

/** Who a licence key belongs to, whatever the account (the gateway's "Authorization: License <key>"). */
export interface ResolvedKey {
  found: boolean;
  account_id: string;
  license_id: string;
  product_id: string;
  stored_status: string;
}

/**
 * A licence key to its account, licence, product and stored status: one read on the unique key index.
 * A malformed key is refused (the gateway answers it 401 before asking); an unknown one is found = false.
 */
export async function resolveLicenseKey(
  store: Pick<LicenseStore, 'findByKey'> & Partial<Pick<LicenseStore, 'findIdInAccount'>>,
  key: string,
  /** Keys replaced by rerolls: one still in its grace is its licence's credential too (for validating). */
  retired?: { find(key: string): Promise<{ account_id: string; license_id: string; until: Date } | null> },
  now: Date = new Date(),
): Promise<ResolvedKey> {
  const parsed = parseLicenseKey(key);
  if (!parsed.ok) throw AppError.invalid('key', 'key must be a licence key');
  const doc =
    (await store.findByKey(parsed.key)) ?? (await rerolledFrom({ retired, store }, parsed.key, now))?.doc ?? null;
  if (!doc) return { found: false, account_id: '', license_id: '', product_id: '', stored_status: '' };
  return {
    found: true,
    account_id: doc.account_id,
    license_id: doc._id,
    product_id: doc.product_id,
    stored_status: doc.status,
  };
}

/** One licence with its product's current entitlements, its active machines counted and when it was last validated. */
export async function getLicense(
  { store, products }: Pick<LicenseDeps, 'store' | 'products'>,
  counter: Pick<ValidationCounter, 'lastValidatedAt'>,
  accountId: string,
  key: string,
) {
  const stored = await ownLicense(store, accountId, key);
  const [doc, activations, lastValidated] = await Promise.all([
    withLiveEntitlements(products, stored),
    store.countActivations(stored._id),
    counter.lastValidatedAt(stored._id),
  ]);
  return { doc, activations, lastValidated };
}

export interface LicenseFilter {
  product_id: string;
  customer_email: string;
  status: string;
}

/**
 * A page of the account's licences, filtered by product, customer e-mail and effective status, with
 * their products' current entitlements (each product of the page looked up once).
 */
export async function listLicenses(
  { store, clock, products }: Pick<LicenseDeps, 'store' | 'clock' | 'products'>,
  accountId: string,
  filter: LicenseFilter,
  page: PageRequest | undefined,
) {
  if (filter.product_id && !isId('prod', filter.product_id))
    throw AppError.invalid('product_id', 'product_id must be a product id (prod_…)');
  if (filter.customer_email.length > EMAIL_MAX_LENGTH)
    throw AppError.invalid('customer_email', `customer_email must be at most ${EMAIL_MAX_LENGTH} characters`);
  const status = isOneOf(licenseStatuses, filter.status) ? filter.status : '';
  if (filter.status && !status) throw AppError.invalid('status', `status must be one of ${licenseStatuses.join(', ')}`);
  const now = clock.now();
  const { items, page: next } = await store.list(
    accountId,
    { productId: filter.product_id, customerEmail: filter.customer_email, status },
    page,
    now,
  );
  return { items: await withLiveEntitlementsAll(products, items), page: next, now };
}

/**
 * Whether an address holds any licence of the account (the portal's sign-in: only then is a link sent).
 * Answers yes or no, nothing about the licences.
 */
export async function holdsLicences(
  { store }: Pick<LicenseDeps, 'store'>,
  accountId: string,
  email: string,
): Promise<boolean> {
  if (!accountId || accountId.length > 64) throw AppError.invalid('account_id', 'account_id is required');
  const normal = email.trim().toLowerCase();
  if (!normal || normal.length > EMAIL_MAX_LENGTH)
    throw AppError.invalid('email', `email is required and must be at most ${EMAIL_MAX_LENGTH} characters`);
  return store.holdsLicences(accountId, normal);
}

/** The account's licence count and the hourly validation counts of the last 30 days. */
export async function readStats(
  store: LicenseStore,
  counter: Pick<ValidationCounter, 'since'>,
  accountId: string,
  now: Date,
) {
  // At most 30 × 24 hourly documents per account: the day series is added up from them.
  const [total, buckets] = await Promise.all([
    store.count(accountId),
    counter.since(accountId, new Date(now.getTime() - 30 * DAY_MS)),
  ]);
  return { total, buckets };
}
