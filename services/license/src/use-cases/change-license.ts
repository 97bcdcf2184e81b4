import { AppError, checkEmail } from '@licensing/runtime';
import {
  entitlementsProblem,
  isOneOf,
  licenseActions,
  validUntil,
  withPolicyDefaults,
  type LicenseAction,
  type TransitionLicenseRequest,
  type UpdateLicenseRequest,
} from '@licensing/proto';
import { storedPolicy } from '../domain/entitlements';
import { expiryBucket } from '../domain/expiry';
import { transition } from '../domain/lifecycle';
import { mergeMetadata } from '../domain/metadata';
import { checkTerms, differing, effectivePolicy, keptByRenewal, withTerms } from '../domain/overrides';
import { licenseEvent } from '../events/license-events';
import type { LicenseDoc } from '../store/models';
import type { LicenseAt, LicenseDeps } from './deps';
import { withLiveEntitlements } from './product-entitlements';
import { fitMachines, limitToFit } from './license-terms';
import { ownLicense } from './read-licenses';

const pastTense: Record<
  LicenseAction,
  'license.suspended' | 'license.reinstated' | 'license.revoked' | 'license.renewed'
> = {
  suspend: 'license.suspended',
  reinstate: 'license.reinstated',
  revoke: 'license.revoked',
  renew: 'license.renewed',
};

type Change = { changes: Partial<LicenseDoc>; event: Parameters<typeof licenseEvent>[0] };

/** Applies a change computed from the current document; retries if another writer got there first. */
export async function changeLicense(
  { store, outbox, clock, products }: LicenseDeps,
  accountId: string,
  key: string,
  apply: (doc: LicenseDoc, now: Date) => Promise<Change>,
): Promise<LicenseAt> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const doc = await ownLicense(store, accountId, key);
    const now = clock.now();
    const { changes, event } = await apply(doc, now);
    // Answered and announced with the product's current entitlements (never stored: domain/entitlements.ts).
    const after = await withLiveEntitlements(products, { ...doc, ...changes });
    const events = [licenseEvent(event, after, now)];
    if (await store.replaceState(doc, changes, events)) {
      outbox.flush(store.models.License, doc._id, events);
      return { doc: after, now };
    }
  }
  throw new AppError('conflict', 'the licence is being changed by another request; retry');
}

/**
 * Changes the customer e-mail, metadata (an empty value removes its entry) and/or the licence's extra
 * entitlements (replaced whole; none clears them), with license.updated. Everything is checked before
 * anything is written.
 */
export async function updateLicense(
  deps: LicenseDeps,
  req: Pick<UpdateLicenseRequest, 'account_id' | 'key' | 'customer_email' | 'metadata'> &
    Partial<Pick<UpdateLicenseRequest, 'set_entitlements' | 'entitlements' | 'overrides' | 'deactivate_excess'>>,
): Promise<LicenseAt> {
  const badEntitlements = req.set_entitlements ? entitlementsProblem('entitlements', req.entitlements) : undefined;
  if (badEntitlements) throw AppError.invalid(badEntitlements.field, badEntitlements.message);
  const terms = checkTerms(req.overrides, deps.clock.now(), false);
  /** The limit the licence's machines must be brought within once the change is written (none: they fit). */
  let fitTo: number | undefined;
  const out = await changeLicense(deps, req.account_id, req.key, async (doc, now) => {
    const changes: Partial<LicenseDoc> = {};
    if (req.customer_email !== undefined) {
      const email = checkEmail('customer_email', req.customer_email);
      Object.assign(changes, { customer_email: email, customer_email_lc: email.toLowerCase() });
    }
    if (Object.keys(req.metadata).length) changes.metadata = mergeMetadata(doc.metadata ?? {}, req.metadata);
    if (req.set_entitlements) changes.extra_entitlements = [...(req.entitlements ?? [])];
    if (terms) {
      const product = await deps.products.getProduct({ account_id: req.account_id, id: doc.product_id });
      const next = withTerms(doc, terms, withPolicyDefaults(product.policy), now);
      fitTo = await limitToFit(deps.store, doc, next.policy.max_activations, req.deactivate_excess === true);
      Object.assign(changes, next);
    }
    if (!Object.keys(changes).length)
      throw new AppError(
        'invalid_request',
        'nothing to change: give customer_email, metadata, entitlements, expires_at, max_activations and/or lease_seconds',
      );
    return { changes, event: 'license.updated' };
  });
  // After the licence's write: from now on no activation takes a slot past the new limit.
  if (fitTo !== undefined) await fitMachines(deps, out.doc, fitTo);
  return out;
}

/** Suspends, reinstates, revokes or renews (with the product's current policy), with its event. */
export const transitionLicense = (
  deps: LicenseDeps,
  req: Pick<TransitionLicenseRequest, 'account_id' | 'key' | 'action'>,
): Promise<LicenseAt> =>
  changeLicense(deps, req.account_id, req.key, async (doc, now) => {
    const action = req.action;
    if (!isOneOf(licenseActions, action))
      throw AppError.invalid('action', `action must be one of ${licenseActions.join(', ')}`);
    // Renewal takes the product's current policy (all but its entitlements, which are read live), with
    // the licence's own numbers over it again; its own expiry is replaced by the renewal's.
    let kept = doc.overrides;
    let current = doc.policy;
    if (action === 'renew') {
      const product = withPolicyDefaults(
        (await deps.products.getProduct({ account_id: req.account_id, id: doc.product_id })).policy,
      );
      kept = differing(keptByRenewal(doc.overrides), product);
      current = effectivePolicy(storedPolicy(product), kept);
    }
    const next = transition(doc, action, now, current);
    // When it stops validating, as every answer judges it (a subscription's payment grace, or none once it ended early).
    const graceEnds = validUntil({ ...next, subscription: doc.subscription });
    const notified = action === 'renew' ? false : doc.expired_notified;
    // Filed again in the sweeper's buckets: a renewed or reinstated licence is found when its grace ends (or now, if it has).
    const changes: Partial<LicenseDoc> = {
      status: next.status,
      expires_at: next.expires_at,
      policy: next.policy,
      grace_ends_at: graceEnds,
      expired_notified: notified,
      expiry_bucket: expiryBucket(graceEnds, notified, now),
      ...(action === 'renew' && doc.overrides ? { overrides: kept } : {}),
    };
    return { changes, event: pastTense[action] };
  });
