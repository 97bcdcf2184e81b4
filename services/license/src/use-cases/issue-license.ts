import { AppError, checkEmail, isId } from '@licensing/runtime';
import { withPolicyDefaults, type CreateLicenseRequest } from '@licensing/proto';
import { storedPolicy, withProductEntitlements } from '../domain/entitlements';
import { newLicense } from '../domain/new-license';
import { checkTerms, withTerms, type AskedTerms } from '../domain/overrides';
import { licenseCreated } from '../events/license-events';
import type { LicenseAt, LicenseDeps } from './deps';
import { withLiveEntitlements } from './product-entitlements';

const isDuplicateKey = (err: unknown) => (err as { code?: number })?.code === 11000;

/** A new licence's checked input; also what an Idempotency-Key's request is compared by. */
export interface NewLicense {
  product_id: string;
  customer_email: string;
  /** Mail the licence to customer_email (license.created asks the notification service); absent: no mail. */
  send_email?: true;
  /** The subscription a recurring checkout issues it for (the only one ApplySubscription applies); absent: none. */
  subscription_id?: string;
  /** The licence's own terms over its product's policy (domain/overrides.ts); absent: none. */
  terms?: AskedTerms;
}

/** Checks what needs no I/O, before anything else happens. */
export function checkNewLicense(
  req: Pick<CreateLicenseRequest, 'product_id' | 'customer_email'> &
    Partial<Pick<CreateLicenseRequest, 'send_email' | 'subscription_id' | 'overrides'>>,
  now: Date = new Date(),
): NewLicense {
  if (!isId('prod', req.product_id)) throw AppError.invalid('product_id', 'product_id must be a product id (prod_…)');
  if (req.subscription_id && !isId('sub', req.subscription_id))
    throw AppError.invalid('subscription_id', 'subscription_id must be a subscription id (sub_…)');
  const terms = checkTerms(req.overrides, now, true);
  return {
    product_id: req.product_id,
    customer_email: checkEmail('customer_email', req.customer_email),
    // Only when asked, so a request without it compares (Idempotency-Key) as it always did.
    ...(req.send_email ? { send_email: true as const } : {}),
    ...(req.subscription_id ? { subscription_id: req.subscription_id } : {}),
    ...(terms ? { terms } : {}),
  };
}

/**
 * A new licence of a product of this account, with its policy, stored with license.created in the same write
 * (with `send_email` on it when the licence mail was asked for: the notification service queues it).
 * `licenseId`: the id an idempotent request's runs share (runtime idempotency.ts): a run repeated after an
 * earlier one that got as far as the insert (`resumed`) answers with that licence instead of issuing another.
 */
export async function issueLicense(
  { store, outbox, clock, products }: LicenseDeps,
  accountId: string,
  input: NewLicense,
  idempotent?: { licenseId: string; resumed: boolean },
): Promise<LicenseAt> {
  const earlier = async (): Promise<LicenseAt | null> => {
    const doc = idempotent && (await store.findIdInAccount(accountId, idempotent.licenseId));
    if (!doc) return null;
    // Its events may not have gone out if that run stopped right after the insert.
    outbox.flush(store.models.License, doc._id);
    return { doc: await withLiveEntitlements(products, doc), now: clock.now() };
  };
  if (idempotent?.resumed) {
    const found = await earlier();
    if (found) return found;
  }
  const productId = input.product_id;
  // The product must exist in the caller's account; another account's product is not found.
  const product = await products.getProduct({ account_id: accountId, id: productId });
  const policy = withPolicyDefaults(product.policy);
  for (let attempt = 0; ; attempt++) {
    const now = clock.now();
    // Stored without the product's entitlements (they are read live); answered and announced with them.
    const doc = newLicense(accountId, productId, input.customer_email, storedPolicy(policy), now);
    if (input.terms) Object.assign(doc, withTerms(doc, input.terms, policy, now));
    if (idempotent) doc._id = idempotent.licenseId;
    if (input.subscription_id) doc.issued_for_subscription = input.subscription_id;
    const answered = withProductEntitlements(doc, policy.entitlements);
    // The mail asked for rides on the event, in this same write: a crash after it loses nothing, and a
    // run that finds the licence already there (`earlier`) writes no second event, so no second mail.
    const events = [licenseCreated(answered, input.send_email)];
    try {
      await store.insert(doc, events);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      // The id taken: another run of the same request got there first (its owner thought dead).
      const found = await earlier();
      if (found) return found;
      // 140 random bits: a key collision means a broken RNG, but never hand out a duplicate.
      if (attempt < 2) continue;
      throw err;
    }
    outbox.flush(store.models.License, doc._id, events);
    return { doc: answered, now };
  }
}
