import { AppError, isId, newId, untilUncontended } from '@licensing/runtime';
import {
  ACTIVATION_NAME_MAX_LENGTH,
  effectiveStatus,
  isFloating,
  lapsed,
  leaseFrom,
  parseLicenseKey,
  withPolicyDefaults,
  type DeactivationReason,
  type DomainEvent,
  type PageRequest,
} from '@licensing/proto';
import { describeMoment, judgeCustomerDeactivation, windowStart } from '../domain/customer-deactivations';
import { reclaimBucket } from '../domain/leases';
import { checkFingerprint } from '../domain/metadata';
import { activationEvent, deactivationEvent } from '../events/license-events';
import type { ActivationDoc, LicenseDoc } from '../store/models';
import type { LicenseDeps } from './deps';
import { withLiveEntitlements } from './product-entitlements';
import { ownLicense } from './read-licenses';

type Deps = Omit<LicenseDeps, 'products'>;

/** How often a renewal that lost a race to another write of the same seat reads it again. */
const RENEW_ROUNDS = 3;

/** A floating seat's lease fields, taken or renewed now; none for a node-locked licence. */
export function leaseOf(
  license: Pick<LicenseDoc, 'policy'>,
  now: Date,
): Pick<ActivationDoc, 'lease_expires_at' | 'reclaim_bucket'> {
  const seconds = license.policy.lease_seconds;
  if (typeof seconds !== 'number') return { lease_expires_at: null, reclaim_bucket: null };
  const until = leaseFrom(now, seconds);
  return { lease_expires_at: until, reclaim_bucket: reclaimBucket(until) };
}

/**
 * Activates a machine on an active licence within its max_activations; an active fingerprint is answered
 * again (on a floating licence with a fresh lease, lapsed or not). When a floating licence is full, its
 * lapsed seats are reclaimed (license.deactivated, reason lapsed) and one of their slots taken.
 */
export async function activate(
  { store, outbox, clock, products }: LicenseDeps,
  req: { account_id: string; key: string; fingerprint: string; name: string },
): Promise<{ activation: ActivationDoc; created: boolean }> {
  const fingerprint = checkFingerprint(req.fingerprint);
  const name = req.name.trim();
  if (name.length > ACTIVATION_NAME_MAX_LENGTH)
    throw AppError.invalid('name', `name must be at most ${ACTIVATION_NAME_MAX_LENGTH} characters`);
  const license = await ownLicense(store, req.account_id, req.key);
  // Retries from client apps are normal: an active fingerprint is simply returned.
  for (let round = 0; round < RENEW_ROUNDS; round++) {
    const existing = await store.findActivation(license._id, fingerprint);
    if (!existing) break;
    if (!isFloating(license.policy)) return { activation: existing, created: false };
    const renewed = await renew(store, license, existing, clock.now());
    if (renewed) return { activation: renewed, created: false };
    // Renewed by a concurrent call, or reclaimed: read it again.
  }
  const now = clock.now();
  const status = effectiveStatus(license, now);
  if (status !== 'active') throw new AppError('conflict', `the licence is ${status}: it cannot be activated`);
  const doc = {
    _id: newId('act'),
    license_id: license._id,
    account_id: req.account_id,
    fingerprint,
    name,
    fingerprint_key: fingerprint,
    created_at: now,
    deactivated_at: null,
    ...leaseOf(license, now),
  };
  // Announced with the product's current entitlements (domain/entitlements.ts).
  const announced = await withLiveEntitlements(products, license);
  const events = [activationEvent('license.activated', announced, { ...doc, slot_key: '' }, now)];
  const reclaim = isFloating(license.policy)
    ? {
        now,
        event: (a: ActivationDoc) => deactivationEvent(announced, a, 'lapsed', now),
        reclaimed: (a: ActivationDoc) => outbox.flush(store.models.Activation, a._id),
      }
    : undefined;
  const out = await untilUncontended(() => store.activate(doc, license.policy.max_activations, events, reclaim));
  if (!out)
    throw AppError.refusedAs(
      'conflict',
      'activation_limit_reached',
      `activation_limit_reached: the licence is already active on ${license.policy.max_activations} machines; deactivate one first`,
    );
  if (out === 'contended')
    throw new AppError('conflict', 'other machines are being activated on this licence at this moment; retry');
  if (out.created) outbox.flush(store.models.Activation, out.activation._id, events);
  return out;
}

/**
 * A fresh lease for an active floating seat (null when another write changed it first). No event and no
 * eviction: a lease only ever grows here, and the caches (this service's and the gateways') judge lapse
 * from the lease they hold, reading again when their copy says lapsed (proto/rules/lease.ts).
 */
function renew(store: Deps['store'], license: LicenseDoc, seat: ActivationDoc, now: Date) {
  const lease = leaseOf(license, now);
  return store.renewLease(seat, lease.lease_expires_at!, lease.reclaim_bucket!, now);
}

/**
 * Extends a floating seat's lease to now + lease_seconds. 404: no such activation on this licence.
 * 409: the licence is node-locked (its policy has no lease), not active, the activation was deactivated
 * (or reclaimed after it lapsed), or its lease has lapsed: the app activates again, which is idempotent
 * and takes a fresh lease (or a free slot).
 */
export async function heartbeat(
  { store, clock, licenses }: Pick<Deps, 'store' | 'clock' | 'licenses'>,
  accountId: string,
  key: string,
  activationId: string,
): Promise<ActivationDoc> {
  const license = await licenseOf(store, licenses, accountId, key);
  if (!isId('act', activationId)) throw AppError.notFound('activation');
  // The usual case in one store operation: a running lease of an active licence, renewed.
  const start = clock.now();
  if (isFloating(license.policy) && effectiveStatus(license, start) === 'active') {
    const lease = leaseOf(license, start);
    const renewed = await store.renewRunningLease(
      license._id,
      activationId,
      start,
      lease.lease_expires_at!,
      lease.reclaim_bucket!,
    );
    if (renewed) return renewed;
  }
  // Else read the seat, to renew it (an older seat without a lease) or to say why not.
  for (let round = 0; round < RENEW_ROUNDS; round++) {
    const seat = await store.findAnyActivation(license._id, activationId);
    if (!seat) throw AppError.notFound('activation');
    const now = clock.now();
    refuseHeartbeat(license, seat, now);
    const renewed = await renew(store, license, seat, now);
    if (renewed) return renewed;
  }
  throw new AppError('conflict', 'this activation is being changed by another request at this moment; retry');
}

/**
 * The licence of this account with this key: from this instance's licence cache when there is one (exact
 * through license.* events, as validations trust it), else from the store. Another account's is not found.
 */
async function licenseOf(
  store: Deps['store'],
  licenses: Deps['licenses'],
  accountId: string,
  key: string,
): Promise<LicenseDoc> {
  if (!licenses) return ownLicense(store, accountId, key);
  const parsed = parseLicenseKey(key);
  const doc = parsed.ok ? (await licenses.read(parsed.key)).doc : null;
  if (!doc || doc.account_id !== accountId) throw AppError.notFound('licence');
  return doc;
}

/** Why a heartbeat of this seat is refused (an AppError), if it is. */
function refuseHeartbeat(license: LicenseDoc, seat: ActivationDoc, now: Date): void {
  if (!isFloating(license.policy))
    throw new AppError(
      'conflict',
      "the licence's policy has no lease (lease_seconds is null): its activations are node-locked and need no heartbeat",
    );
  if (seat.deactivated_at)
    throw new AppError(
      'conflict',
      seat.deactivated_reason === 'lapsed'
        ? 'lease_expired: the seat lapsed and was reclaimed; activate again'
        : 'the activation was deactivated; activate again',
    );
  const status = effectiveStatus(license, now);
  if (status !== 'active') throw new AppError('conflict', `the licence is ${status}: its seats cannot be renewed`);
  if (lapsed(seat.lease_expires_at?.getTime(), now.getTime()))
    throw new AppError(
      'conflict',
      `lease_expired: the seat lapsed at ${seat.lease_expires_at!.toISOString()}; activate again`,
    );
}

/** The active machines of one licence of this account. */
export async function listActivations(
  { store }: Pick<LicenseDeps, 'store'>,
  accountId: string,
  key: string,
  page: PageRequest | undefined,
) {
  const license = await ownLicense(store, accountId, key);
  return store.listActivations(license._id, page);
}

/**
 * Frees a machine's slot, with license.deactivated; an unknown or already freed activation is not found.
 * An app credential (`keyScope` "validate", which anyone holding the app has) frees machines within the
 * policy's customer_deactivations_per_30_days, as a customer in the portal does (the same count): one
 * licence key must not free seats for ever more machines. The exception is an app releasing its own
 * floating seat (the activation's fingerprint is the `fingerprint` it sends): seats come and go.
 */
export async function deactivate(
  deps: LicenseDeps,
  accountId: string,
  key: string,
  activationId: string,
  caller: { keyScope?: string; fingerprint?: string } = {},
): Promise<ActivationDoc> {
  const license = await ownLicense(deps.store, accountId, key);
  if (!isId('act', activationId)) throw AppError.notFound('activation');
  if (caller.keyScope === 'validate') {
    const seat = await deps.store.findAnyActivation(license._id, activationId);
    if (!seat || seat.deactivated_at) throw AppError.notFound('activation');
    const ownFloatingSeat =
      isFloating(license.policy) && !!caller.fingerprint && seat.fingerprint === caller.fingerprint;
    if (!ownFloatingSeat) {
      const done = await freeWithinCustomerAllowance(deps, license, activationId, 'app');
      if (!done) throw AppError.notFound('activation');
      return done;
    }
  }
  const done = await freeActivation(deps, license, activationId, 'requested');
  if (!done) throw AppError.notFound('activation');
  return done;
}

/**
 * Frees a machine the customer chose, in the portal or through their app (an app credential), within the
 * policy's customer_deactivations_per_30_days, through the one deactivation path with reason "customer"
 * (which is what the next count reads). Null when the activation is not an active one of this licence.
 *
 * The count and the deactivation are two operations, and the store has no transactions (FerretDB's
 * updates are not even atomic): two requests of the same customer at the same moment (a double click,
 * two tabs) can both read a count under the limit and both free a machine, so a race lets a customer
 * free at worst one extra machine per request in flight then. Nothing is half-written either way: the
 * record that is counted is the deactivation itself (reason and time on the activation, one write
 * with its license.deactivated), never a separate counter that a crash could leave out of step.
 */
export async function freeWithinCustomerAllowance(
  deps: LicenseDeps,
  license: LicenseDoc,
  activationId: string,
  through: 'portal' | 'app',
): Promise<ActivationDoc | null> {
  // A licence stored before the setting existed has its default (3).
  const limit = withPolicyDefaults(license.policy).customer_deactivations_per_30_days;
  const now = deps.clock.now();
  const recent = await deps.store.customerDeactivationsSince(license._id, windowStart(now), limit);
  const verdict = judgeCustomerDeactivation(limit, recent, now);
  if (!verdict.allowed && verdict.reason === 'disabled')
    throw new AppError(
      'conflict',
      through === 'portal'
        ? 'machines of this licence are freed by the vendor only: contact the vendor to free one'
        : "machines of this licence are freed by the vendor only (the policy's customer_deactivations_per_30_days is 0); an app may release only its own floating seat",
    );
  if (!verdict.allowed) {
    const freed = `${limit} machine${limit === 1 ? '' : 's'} of this licence`;
    throw AppError.rateLimited(
      through === 'portal'
        ? `you have freed ${freed} in the last 30 days; you can free another machine on ${describeMoment(verdict.nextAt)}`
        : `the customer has freed ${freed} in the last 30 days (the policy's customer_deactivations_per_30_days, counted for the portal and app credentials alike); another may be freed on ${describeMoment(verdict.nextAt)}, or by the vendor's full-scope key`,
      verdict.retryAfterS,
    );
  }
  return freeActivation(deps, license, activationId, 'customer');
}

/**
 * The one deactivation path (a vendor's DELETE, a customer in the portal): frees the slot in one write
 * that stores license.deactivated with this reason, and publishes it through the outbox that keeps the
 * caches exact. Null when the activation is not an active one of this licence.
 */
export async function freeActivation(
  { store, outbox, clock, products }: LicenseDeps,
  license: LicenseDoc,
  activationId: string,
  reason: DeactivationReason,
): Promise<ActivationDoc | null> {
  const now = clock.now();
  const events: DomainEvent[] = [];
  const announced = await withLiveEntitlements(products, license);
  const done = await store.deactivate(
    license._id,
    activationId,
    now,
    (a) => {
      events.push(deactivationEvent(announced, a, reason, now));
      return events[0];
    },
    reason,
  );
  if (!done) return null;
  outbox.flush(store.models.Activation, done._id, events);
  return done;
}
