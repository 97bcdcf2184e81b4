import {
  FINGERPRINT_MAX_LENGTH,
  activationsMatter,
  entitlementsProblem,
  isFloating,
  judge,
  lapsed,
  parseLicenseKey,
  seatFacts,
  type ActivationFacts,
  type ParsedKey,
  type RecordValidationsRequest,
  type ValidateLicenseRequest,
  type Verdict,
} from '@licensing/proto';
import { AppError, type Clock } from '@licensing/runtime';
import { isCode } from '../domain/stats';
import { MAX_CACHED_FINGERPRINTS, type LicenseCache, type ValidationRecord } from '../caches/license-cache';
import type { LicenseDoc } from '../store/models';
import type { LicenseStore } from '../store/queries';
import type { ValidationCounter } from '../jobs/validation-counter';
import type { RecentGroup } from '../store/stats';
import type { ProductLookup } from './deps';
import { withLiveEntitlements } from './product-entitlements';
import { ownLicense } from './read-licenses';

/**
 * What validating needs: the licences and their products (through this instance's caches), the exact
 * activation reads, the counts.
 */
export interface ValidationDeps {
  licenses: Pick<LicenseCache, 'read'>;
  /** A licence's entitlements are its product's current ones: a ProductCache hit, no gRPC call. */
  products: ProductLookup;
  store: Pick<LicenseStore, 'findActivation' | 'countActivations'>;
  counter: Pick<ValidationCounter, 'record' | 'validated' | 'addRecent'>;
  clock: Clock;
}

export interface Validated {
  parsed: ParsedKey;
  record: ValidationRecord;
  /** The caller's licence as answered (its product's current entitlements), null for none or another account's. */
  license: LicenseDoc | null;
  verdict: Verdict;
  now: Date;
}

/**
 * The hot path: judges a key for an account (proto/rules, as the gateways do) and counts the answer. The
 * licence comes from this instance's cache, else one read by key; active machines are listed with it
 * when the policy requires activation, and read one by one only for a licence with more than a cache holds.
 */
export async function validateLicense(
  { licenses, products, store, counter, clock }: ValidationDeps,
  req: Pick<ValidateLicenseRequest, 'account_id' | 'key' | 'product_id' | 'fingerprint' | 'from_store'> &
    Partial<Pick<ValidateLicenseRequest, 'entitlements' | 'already_counted'>>,
): Promise<Validated> {
  const entitlements = req.entitlements ?? [];
  // The gateway checked them; a caller of this contract that did not is refused, not judged.
  const badEntitlements = entitlements.length ? entitlementsProblem('entitlements', entitlements) : undefined;
  if (badEntitlements) throw AppError.invalid(badEntitlements.field, badEntitlements.message);
  const parsed = parseLicenseKey(req.key);
  let record: ValidationRecord = parsed.ok
    ? await licenses.read(parsed.key, req.from_store)
    : { doc: null, fingerprints: [], leases: new Map() };
  const fingerprint = req.fingerprint.trim().slice(0, FINGERPRINT_MAX_LENGTH);
  const now = clock.now();
  // A remembered copy that says this machine's seat lapsed may predate a heartbeat (which sends no event,
  // a lease only grows): the store says whether it did.
  if (parsed.ok && record.rememberedSince !== undefined && lapsed(record.leases.get(fingerprint), now.getTime()))
    record = await licenses.read(parsed.key, true);
  // The caller's licence gets its product's entitlements; from_store (a gateway heard of a change
  // lately) reads the product past this instance's memory too, as it does the licence.
  const own = record.doc && record.doc.account_id === req.account_id ? record.doc : null;
  const license = own && (await withLiveEntitlements(products, own, req.from_store));
  const doc = license ?? record.doc;
  const needsActivation = !!doc && doc.account_id === req.account_id && activationsMatter(doc.policy);
  let activation: ActivationFacts = { fingerprintActive: false, count: 0 };
  if (needsActivation && record.fingerprints.length <= MAX_CACHED_FINGERPRINTS) {
    const active = { has: (f: string) => record.fingerprints.includes(f), size: record.fingerprints.length };
    activation = seatFacts(active, record.leases, fingerprint, now.getTime());
  } else if (needsActivation) {
    const seat = fingerprint ? await store.findActivation(doc._id, fingerprint) : null;
    const leaseEnd = isFloating(doc.policy) ? (seat?.lease_expires_at?.getTime() ?? null) : null;
    const leaseExpired = !!seat && lapsed(leaseEnd, now.getTime());
    const fingerprintActive = !!seat && !leaseExpired;
    // Counted exactly, and only when the answer depends on it (lapsed seats not yet reclaimed included).
    activation = {
      fingerprintActive,
      leaseExpired,
      leaseEndsAt: fingerprintActive ? leaseEnd : null,
      count: fingerprintActive ? 0 : await store.countActivations(doc._id),
    };
  }
  // A key a reroll replaced is judged as its licence, until the end of its grace (proto/rules/verdict.ts).
  const facts = doc && record.retiredUntil ? { ...doc, retired_until: record.retiredUntil } : doc;
  const verdict = judge(
    parsed,
    facts,
    { accountId: req.account_id, productId: req.product_id, fingerprint, entitlements },
    activation,
    now,
  );
  // A gateway's second ask of one validation (already_counted) was counted at its first.
  if (req.already_counted) return { parsed, record, license, verdict, now };
  counter.record(req.account_id, verdict.code, verdict.valid, now);
  if (verdict.visible && doc) {
    counter.validated(req.account_id, doc._id, now);
    counter.addRecent({
      accountId: req.account_id,
      licenseId: doc._id,
      hour: now,
      code: verdict.code,
      fingerprint,
      count: 1,
      lastAt: now,
    });
  }
  return { parsed, record, license, verdict, now };
}

/**
 * Adds the validations gateways answered from their caches to the counts. What does not hold together
 * (a negative count, an unknown code, a time that is not one) is dropped, never stored: a code would
 * become a field path in the store.
 */
export function recordGatewayValidations(
  counter: Pick<ValidationCounter, 'add' | 'validated' | 'addRecent'>,
  req: RecordValidationsRequest,
): void {
  for (const t of req.tallies) {
    const hour = new Date(t.hour);
    if (!t.account_id || Number.isNaN(hour.getTime()) || t.validations < 0 || t.valid < 0 || t.valid > t.validations)
      continue;
    const byCode = Object.fromEntries(
      Object.entries(t.by_code).filter(([code, n]) => isCode(code) && Number.isInteger(n) && n > 0),
    );
    counter.add(t.account_id, hour, t.validations, t.valid, byCode);
  }
  for (const v of req.last_validated) {
    const at = new Date(v.at);
    if (v.account_id && v.license_id && !Number.isNaN(at.getTime())) counter.validated(v.account_id, v.license_id, at);
  }
  for (const g of req.seen) {
    const [hour, lastAt] = [new Date(g.hour), new Date(g.last_at)];
    if (
      !g.account_id ||
      !g.license_id ||
      !isCode(g.code) ||
      g.fingerprint.length > FINGERPRINT_MAX_LENGTH ||
      g.count < 1 ||
      Number.isNaN(hour.getTime()) ||
      Number.isNaN(lastAt.getTime())
    )
      continue;
    counter.addRecent({
      accountId: g.account_id,
      licenseId: g.license_id,
      hour,
      code: g.code,
      fingerprint: g.fingerprint,
      count: g.count,
      lastAt,
    });
  }
}

/** A licence's latest validation groups, newest first (1–50, else 20). */
export async function recentValidations(
  store: Pick<LicenseStore, 'findInAccount'>,
  counter: Pick<ValidationCounter, 'recent'>,
  req: { account_id: string; key: string; limit: number },
): Promise<RecentGroup[]> {
  const doc = await ownLicense(store, req.account_id, req.key);
  return counter.recent(doc._id, req.limit >= 1 && req.limit <= 50 ? req.limit : 20);
}
