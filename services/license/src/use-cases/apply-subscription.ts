import { AppError, isId } from '@licensing/runtime';
import { SEATS_MAX, parseLicenseKey, withPolicyDefaults, type ApplySubscriptionRequest } from '@licensing/proto';
import { storedPolicy } from '../domain/entitlements';
import { effectivePolicy, keptByRenewal } from '../domain/overrides';
import { expiryBucket } from '../domain/expiry';
import {
  isSubscriptionStatus,
  seatsPolicy,
  subscriptionChanges,
  subscriptionStep,
  type StoredSubscription,
  type SubscriptionChange,
} from '../domain/subscription';
import { licenseEvent } from '../events/license-events';
import type { LicenseDoc } from '../store/models';
import { rerolledFrom } from '../store/retired-keys';
import type { LicenseAt, LicenseDeps } from './deps';
import { withLiveEntitlements } from './product-entitlements';
import { ownLicense } from './read-licenses';

const date = (field: string, s: string, optional = true): Date | null => {
  if (!s && optional) return null;
  const d = new Date(s);
  if (!s || Number.isNaN(d.getTime())) throw AppError.invalid(field, `${field} must be an RFC 3339 time`);
  return d;
};

/**
 * The subscription's licence by the key the checkout service knows: a reroll may have given it another
 * (retired keys are kept for good, whatever their grace), and the subscription still follows it. The
 * checkout service learns the new key from this call's answer.
 */
async function subscriptionLicense(
  deps: Pick<LicenseDeps, 'store' | 'retired'>,
  accountId: string,
  key: string,
): Promise<LicenseDoc> {
  try {
    return await ownLicense(deps.store, accountId, key);
  } catch (err) {
    const parsed = parseLicenseKey(key);
    const from = parsed.ok ? await rerolledFrom(deps, parsed.key) : undefined;
    if (from?.doc.account_id !== accountId) throw err;
    return from.doc;
  }
}

/**
 * The checkout service says what a licence's subscription is now: the licence follows (expiry, seats,
 * product on a plan change, suspension while unpaid) with the license.* events of what changed. States
 * are numbered (seq): one older than, or the same as, the state applied last changes nothing, so
 * retries and late calls are harmless.
 */
export async function applySubscription(deps: LicenseDeps, req: ApplySubscriptionRequest): Promise<LicenseAt> {
  const s = req.subscription;
  if (!s || !isId('sub', s.id)) throw AppError.invalid('subscription.id', 'subscription.id must be a subscription id');
  if (!isSubscriptionStatus(s.status)) throw AppError.invalid('subscription.status', 'unknown subscription status');
  if (!(subscriptionChanges as readonly string[]).includes(req.change))
    throw AppError.invalid('change', `change must be one of ${subscriptionChanges.join(', ')}`);
  if (!Number.isInteger(req.quantity) || req.quantity < 1 || req.quantity > SEATS_MAX)
    throw AppError.invalid('quantity', `quantity must be a whole number from 1 to ${SEATS_MAX}`);
  if (!Number.isSafeInteger(req.seq) || req.seq < 1) throw AppError.invalid('seq', 'seq must be positive');
  if (req.product_id && !isId('prod', req.product_id))
    throw AppError.invalid('product_id', 'product_id must be a product id');
  const expiresAt = date('expires_at', req.expires_at, false);
  const sub: StoredSubscription = {
    id: s.id,
    status: s.status as StoredSubscription['status'],
    trial_end: date('subscription.trial_end', s.trial_end),
    paid_through: date('subscription.paid_through', s.paid_through),
    grace_until: date('subscription.grace_until', s.grace_until),
    ended_early: s.status === 'canceled' && s.ended_early === true,
    seq: req.seq,
    quantity: req.quantity,
  };
  const { store, outbox, clock, products } = deps;
  for (let attempt = 0; attempt < 5; attempt++) {
    const doc = await subscriptionLicense(deps, req.account_id, req.key);
    if (doc.subscription && doc.subscription.id !== sub.id)
      throw new AppError('conflict', 'the licence follows another subscription');
    // Only the licence a checkout issued for this subscription follows it (a licence that follows it
    // already was issued before the binding was recorded).
    if (!doc.subscription && doc.issued_for_subscription !== sub.id)
      throw new AppError('conflict', 'the licence was not issued for this subscription');
    const now = clock.now();
    if (doc.subscription && doc.subscription.seq >= sub.seq)
      return { doc: await withLiveEntitlements(products, doc), now };
    const productId = req.product_id || doc.product_id;
    const planChanged = productId !== doc.product_id;
    let policy = doc.policy;
    if (planChanged || !doc.subscription || doc.subscription.quantity !== sub.quantity) {
      // The product's policy (read fresh: a plan change must not take a stale one), per seat. Another
      // account's product is not found: NOT_FOUND, nothing written.
      const get = products.getFreshProduct ?? products.getProduct;
      const product = await get.call(products, { account_id: req.account_id, id: productId });
      // The licence's own numbers stay over it (domain/overrides.ts).
      policy = effectivePolicy(
        seatsPolicy(storedPolicy(withPolicyDefaults(product.policy)), sub.quantity),
        doc.overrides,
      );
    }
    const step = subscriptionStep(
      doc,
      { subscription: sub, expires_at: expiresAt, policy },
      req.change as SubscriptionChange,
    );
    const movedLater =
      !!step.graceEndsAt && (!doc.grace_ends_at || step.graceEndsAt.getTime() > doc.grace_ends_at.getTime());
    const notified = movedLater ? false : doc.expired_notified;
    const changes: Partial<LicenseDoc> = {
      product_id: productId,
      policy,
      status: step.status,
      expires_at: expiresAt,
      grace_ends_at: step.graceEndsAt,
      expired_notified: notified,
      expiry_bucket: expiryBucket(step.graceEndsAt, notified, now),
      subscription: sub,
      // The subscription sets the expiry: an expiry of the licence's own is replaced, as a renewal does.
      ...(doc.overrides?.expires_at !== undefined ? { overrides: keptByRenewal(doc.overrides) } : {}),
    };
    const after = await withLiveEntitlements(products, { ...doc, ...changes });
    const events = step.events.map((type) => licenseEvent(type, after, now));
    if (await store.replaceState(doc, changes, events)) {
      outbox.flush(store.models.License, doc._id, events);
      return { doc: after, now };
    }
  }
  throw new AppError('conflict', 'the licence is being changed by another request; retry');
}
