import { AppError, newEvent } from '@licensing/runtime';
import { generateLicenseKey, parseLicenseKey, type DomainEvent } from '@licensing/proto';
import { graceEnd, retiredKeysAfter } from '../domain/reroll';
import { licenseData, withMailAsked } from '../events/license-events';
import type { LicenseDoc } from '../store/models';
import type { RetiredKeyDoc, RetiredKeyStore } from '../store/retired-keys';
import type { LicenseAt, LicenseDeps } from './deps';
import { withLiveEntitlements } from './product-entitlements';

export interface RerollDeps extends LicenseDeps {
  retired: Pick<RetiredKeyStore, 'claim' | 'find' | 'extend' | 'release'>;
}

/** A claim older than this whose licence still has the old key was left by a reroll that stopped: it is finished. */
const ABANDONED_CLAIM_MS = 30_000;

/**
 * One reroll, one event: every run that finishes the same claim publishes the same id, and JetStream
 * keeps one.
 */
const rerolledEvent = (
  after: Omit<LicenseDoc, 'outbox'>,
  claim: RetiredKeyDoc,
  now: Date,
  sendEmail: boolean,
): DomainEvent =>
  withMailAsked(
    newEvent(
      'license.rerolled',
      after.account_id,
      {
        license: licenseData(after, now),
        previous_key: claim._id,
        previous_key_valid_until: claim.until.toISOString(),
      },
      now,
      `evt_rerolled_${after._id.slice(4)}_${claim.created_at.getTime()}`,
    ),
    sendEmail,
  );

/**
 * Gives the caller's licence a new key, keeping everything else (id, activations, entitlements,
 * metadata, expiry); the old key validates until `grace_hours` have passed. Without transactions:
 * 1. the old key is claimed by a unique insert (retired_keys, `_id` = the old key) that names the new
 *    key, so of two rerolls of one key only one new key exists (the second finishes the first's);
 * 2. the licence gets the new key, if it still has the old one, with license.rerolled in the same write.
 * A reroll that stopped between the two is finished by the next reroll of the old key. Asking again
 * with a key already replaced (a retry whose answer was lost) answers the licence as it is now.
 * `send_email`: the new key's mail is asked on license.rerolled, in the write of step 2 (the notification
 * service queues it once per event): a retry that finds the key already replaced writes no event, so no
 * second mail.
 */
export async function rerollLicense(
  deps: RerollDeps,
  req: { account_id: string; key: string; grace_hours: number; send_email?: boolean },
): Promise<LicenseAt> {
  const { store, retired, clock, outbox, products } = deps;
  const now = clock.now();
  const until = graceEnd(req.grace_hours, now);
  const parsed = parseLicenseKey(req.key);
  if (!parsed.ok) throw AppError.notFound('licence');
  const oldKey = parsed.key;
  for (let attempt = 0; attempt < 3; attempt++) {
    const doc = await store.findInAccount(req.account_id, oldKey);
    if (!doc) return replaced(deps, req.account_id, oldKey);
    if (doc.status === 'revoked') throw new AppError('conflict', 'a revoked licence cannot be rerolled');
    // Refused before anything changes, as POST /licenses/{key}/email refuses it.
    if (req.send_email && !doc.customer_email)
      throw new AppError('conflict', 'the licence has no customer_email: there is nobody to send it to');
    const fresh: RetiredKeyDoc = {
      _id: oldKey,
      account_id: doc.account_id,
      license_id: doc._id,
      new_key: generateLicenseKey(),
      until,
      created_at: now,
    };
    let claim = fresh;
    if (!(await retired.claim(fresh))) {
      const earlier = await retired.find(oldKey);
      if (!earlier) continue; // released meanwhile (a collision): claim again
      if (earlier.license_id !== doc._id) throw new AppError('conflict', 'this key cannot be rerolled; retry');
      if (now.getTime() - earlier.created_at.getTime() < ABANDONED_CLAIM_MS)
        throw new AppError('conflict', 'this licence is being rerolled by another request; retry');
      // Left by a reroll that stopped before the licence changed: finished with its new key and this grace.
      await retired.extend(oldKey, until);
      claim = { ...earlier, until };
    }
    const changes: Partial<LicenseDoc> = {
      key: claim.new_key,
      retired_keys: retiredKeysAfter(doc.retired_keys, oldKey, claim.until, now),
    };
    const after = await withLiveEntitlements(products, { ...doc, ...changes });
    const events = [rerolledEvent(after, claim, now, !!req.send_email)];
    let written: boolean;
    try {
      written = await store.replaceKey(doc, changes, events);
    } catch (err) {
      if ((err as { code?: number })?.code !== 11000) throw err;
      // The new key is another licence's (140 random bits: a broken RNG, or an imported key): another one.
      await retired.release(oldKey, claim.new_key);
      continue;
    }
    if (written) {
      outbox.flush(store.models.License, doc._id, events);
      return { doc: after, now };
    }
    // Changed meanwhile: by a reroll finishing the same claim (the same new key), or anything else (again).
    const current = await store.findIdInAccount(req.account_id, doc._id);
    if (current?.key === claim.new_key) return { doc: await withLiveEntitlements(products, current), now };
  }
  throw new AppError('conflict', 'the licence is being changed by another request; retry');
}

/** A key that is no licence's now: the licence it was taken from (a retried reroll), else 404. */
async function replaced(deps: RerollDeps, accountId: string, oldKey: string): Promise<LicenseAt> {
  const claim = await deps.retired.find(oldKey);
  const doc =
    claim && claim.account_id === accountId ? await deps.store.findIdInAccount(accountId, claim.license_id) : null;
  if (!doc || doc.key === oldKey) throw AppError.notFound('licence');
  return { doc: await withLiveEntitlements(deps.products, doc), now: deps.clock.now() };
}
