import { SLOT_ROUNDS, bulkUpdate, chooseSlot, listPage, outboxOf, withEvents } from '@licensing/runtime';
import { lapsed, type DeactivationReason, type DomainEvent, type PageRequest } from '@licensing/proto';
import type { ActivationDoc, LicenseModels, SightingDoc } from './models';
import { isDuplicate, QUERY_MAX_MS } from './store-base';
import { ExpiryQueries } from './expiry-queries';

/** An active machine as a validation sees it: its fingerprint and, for a floating seat, when its lease ends (epoch ms). */
export interface Seat {
  fingerprint: string;
  leaseEndsAt: number | null;
}

/** Reads of a licence's active machines in flight at once, when storing sightings. */
const SIGHTING_READS_AT_ONCE = 8;

/** The queries of a licence's machines: activations, floating seats' leases, deactivations and sightings. */
export class ActivationQueries extends ExpiryQueries {
  findActivation(licenseId: string, fingerprint: string): Promise<ActivationDoc | null> {
    return this.models.Activation.findOne({ license_id: licenseId, fingerprint_key: fingerprint }, { outbox: 0 })
      .lean<ActivationDoc>()
      .exec();
  }

  /**
   * Takes a free slot for a new activation with a constant number of store
   * operations, whatever max_activations is: one count (a full node-locked
   * licence is refused there), then at most SLOT_ROUNDS rounds of one read of the
   * taken slots and one unique insert (plus one fingerprint look-up when it
   * collides). The unique (license_id, slot_key) index is what holds
   * max_activations under any concurrency. On a floating licence a full round
   * first reclaims the lapsed seats it read (`reclaim`, each a conditional update
   * with its license.deactivated), whose slots are then free for this round or a
   * concurrent one. 'contended' when every round lost a race while slots were free.
   */
  async activate(
    doc: Omit<ActivationDoc, 'slot_key' | 'outbox'>,
    maxActivations: number | null,
    events: DomainEvent[],
    reclaim?: { now: Date; event: (a: ActivationDoc) => DomainEvent; reclaimed: (a: ActivationDoc) => void },
  ): Promise<{ activation: ActivationDoc; created: boolean } | null | 'contended'> {
    const insert = async (slot: string) => {
      const activation = { ...doc, slot_key: slot };
      await this.models.Activation.create({ ...activation, ...outboxOf(events) });
      return { activation, created: true };
    };
    if (maxActivations === null) return insert(doc._id);
    if (!reclaim && (await this.countActivations(doc.license_id)) >= maxActivations) return null;
    for (let round = 0; round < SLOT_ROUNDS; round++) {
      const taken = await this.models.Activation.find(
        { license_id: doc.license_id, deactivated_at: null },
        { slot_key: 1, lease_expires_at: 1 },
      )
        .maxTimeMS(QUERY_MAX_MS)
        .lean<Pick<ActivationDoc, '_id' | 'slot_key' | 'lease_expires_at'>[]>()
        .exec();
      let slot = chooseSlot(new Set(taken.map((a) => a.slot_key)), maxActivations);
      if (slot === null && reclaim) {
        const nowMs = reclaim.now.getTime();
        for (const seat of taken) {
          if (!lapsed(seat.lease_expires_at?.getTime(), nowMs)) continue;
          const freed = await this.reclaimLapsed(seat._id, seat.lease_expires_at!, reclaim.now, reclaim.event);
          if (!freed) continue;
          reclaim.reclaimed(freed);
          slot ??= seat.slot_key;
        }
        // Freed by a concurrent activation instead: the next round reads the slots again.
        if (slot === null && taken.some((a) => lapsed(a.lease_expires_at?.getTime(), nowMs))) continue;
      }
      if (slot === null) return null;
      try {
        return await insert(slot);
      } catch (err) {
        if (!isDuplicate(err)) throw err;
        // Either the slot was just taken (choose again) or this fingerprint was just activated by a concurrent retry.
        const existing = await this.findActivation(doc.license_id, doc.fingerprint);
        if (existing) return { activation: existing, created: false };
      }
    }
    return 'contended';
  }

  /**
   * Frees a lapsed floating seat (its slot and fingerprint) with its license.deactivated, only if it is
   * still active with the lease that was read: a heartbeat or re-activation that extended it first wins,
   * and of two reclaimers only one gets through. The record of the reclaimed seat, or null.
   */
  async reclaimLapsed(
    id: string,
    leaseExpiresAt: Date,
    at: Date,
    event: (a: ActivationDoc) => DomainEvent,
  ): Promise<ActivationDoc | null> {
    const current = await this.models.Activation.findOne({ _id: id, deactivated_at: null }, { outbox: 0 })
      .lean<ActivationDoc>()
      .exec();
    if (!current || current.lease_expires_at?.getTime() !== leaseExpiresAt.getTime()) return null;
    const after: ActivationDoc = {
      ...current,
      deactivated_at: at,
      deactivated_reason: 'lapsed',
      reclaim_bucket: null,
    };
    const res = await this.models.Activation.updateOne(
      { _id: id, deactivated_at: null, lease_expires_at: leaseExpiresAt },
      {
        $set: {
          deactivated_at: at,
          deactivated_reason: 'lapsed',
          slot_key: `freed:${id}`,
          fingerprint_key: `freed:${id}`,
          reclaim_bucket: null,
          ...withEvents([event(after)]),
        },
      },
    );
    return res.modifiedCount === 1 ? after : null;
  }

  /**
   * Sets a floating seat's lease to `until`, only while the seat is active and its lease is still the
   * one read (`from`): a reclaim of the lapsed seat and this renewal cannot both happen. The activation
   * as renewed, or null when it changed meanwhile.
   */
  async renewLease(
    current: ActivationDoc,
    until: Date,
    reclaimBucket: string,
    seenAt: Date,
  ): Promise<ActivationDoc | null> {
    // The machine was seen now: its last_seen_at moves in the same write ($max: a later validation stays).
    const res = await this.models.Activation.updateOne(
      { _id: current._id, deactivated_at: null, lease_expires_at: current.lease_expires_at ?? null },
      { $set: { lease_expires_at: until, reclaim_bucket: reclaimBucket }, $max: { last_seen_at: seenAt } },
    );
    if (res.modifiedCount !== 1) return null;
    const seen = current.last_seen_at && current.last_seen_at > seenAt ? current.last_seen_at : seenAt;
    return { ...current, lease_expires_at: until, reclaim_bucket: reclaimBucket, last_seen_at: seen };
  }

  /**
   * The heartbeat's one store operation when all is well: the lease of an active seat of this licence
   * whose lease still runs, set to `until`. Null when any of that does not hold (the caller reads the
   * seat to say why). The _id equality makes it one row on every store.
   */
  async renewRunningLease(
    licenseId: string,
    id: string,
    now: Date,
    until: Date,
    reclaimBucket: string,
  ): Promise<ActivationDoc | null> {
    // No projection: FerretDB's findAndModify does not take one.
    const doc = await this.models.Activation.findOneAndUpdate(
      { _id: id, license_id: licenseId, deactivated_at: null, lease_expires_at: { $gt: now } },
      { $set: { lease_expires_at: until, reclaim_bucket: reclaimBucket }, $max: { last_seen_at: now } },
      { returnDocument: 'after' },
    )
      .lean<ActivationDoc>()
      .exec();
    if (!doc) return null;
    const { outbox: _, ...activation } = doc;
    return activation;
  }

  /** An activation of a licence by id, active or not (what a heartbeat of a freed one is told). */
  findAnyActivation(licenseId: string, id: string): Promise<ActivationDoc | null> {
    return this.models.Activation.findOne({ _id: id, license_id: licenseId }, { outbox: 0 })
      .lean<ActivationDoc>()
      .exec();
  }

  /** The floating seats of one reclaim bucket, by id after `after` (one equality on an index, as the expiry sweep). */
  inReclaimBucket(bucket: string, after: string, limit: number): Promise<ActivationDoc[]> {
    const filter = after ? { reclaim_bucket: bucket, _id: { $gt: after } } : { reclaim_bucket: bucket };
    return this.models.Activation.find(filter, { outbox: 0 })
      .sort({ _id: 1 })
      .limit(limit)
      .lean<ActivationDoc[]>()
      .exec();
  }

  async listActivations(licenseId: string, page: PageRequest | undefined) {
    const listed = await listPage<ActivationDoc>(
      this.models.Activation,
      { license_id: licenseId, deactivated_at: null },
      page,
    );
    return { ...listed, items: await withSightings(this.models, licenseId, listed.items) };
  }

  /** Up to `limit` active machines with their leases (what a cached validation compares against). */
  async activeSeats(licenseId: string, limit: number): Promise<Seat[]> {
    const docs = await this.models.Activation.find(
      { license_id: licenseId, deactivated_at: null },
      { fingerprint: 1, lease_expires_at: 1 },
    )
      .limit(limit)
      .lean<Pick<ActivationDoc, 'fingerprint' | 'lease_expires_at'>[]>()
      .exec();
    return docs.map((d) => ({ fingerprint: d.fingerprint, leaseEndsAt: d.lease_expires_at?.getTime() ?? null }));
  }

  /** A licence's active machines, each with when it was last seen (as listActivations shows it). */
  async activeMachines(licenseId: string): Promise<ActivationDoc[]> {
    const docs = await this.models.Activation.find({ license_id: licenseId, deactivated_at: null }, { outbox: 0 })
      .maxTimeMS(QUERY_MAX_MS)
      .lean<ActivationDoc[]>()
      .exec();
    return withSightings(this.models, licenseId, docs);
  }

  /**
   * Moves the licence's active machines whose slot is not one of "1".."max" (taken under a higher limit,
   * or none) into free ones: chooseSlot counts only those, so a lowered or new limit holds for the next
   * activation too. Each move is conditional on the slot read; one that loses a race tries the next slot.
   */
  async moveIntoSlots(licenseId: string, max: number): Promise<void> {
    const active = await this.models.Activation.find({ license_id: licenseId, deactivated_at: null }, { slot_key: 1 })
      .maxTimeMS(QUERY_MAX_MS)
      .lean<Pick<ActivationDoc, '_id' | 'slot_key'>[]>()
      .exec();
    const within = (k: string) => /^\d+$/.test(k) && Number(k) >= 1 && Number(k) <= max;
    const taken = new Set(active.map((a) => a.slot_key).filter(within));
    let next = 1;
    for (const seat of active.filter((a) => !within(a.slot_key))) {
      for (; next <= max; next++) {
        const slot = String(next);
        if (taken.has(slot)) continue;
        taken.add(slot);
        try {
          const res = await this.models.Activation.updateOne(
            { _id: seat._id, slot_key: seat.slot_key, deactivated_at: null },
            { $set: { slot_key: slot } },
          );
          if (res.modifiedCount === 1 || res.matchedCount === 0) break;
        } catch (err) {
          if (!isDuplicate(err)) throw err; // taken meanwhile: the next one
        }
      }
    }
  }

  countActivations(licenseId: string): Promise<number> {
    return this.models.Activation.countDocuments({ license_id: licenseId, deactivated_at: null })
      .maxTimeMS(QUERY_MAX_MS)
      .exec();
  }

  /**
   * Frees the slot and the fingerprint, keeping the record (with its reason and time: a customer's are
   * what customerDeactivationsSince counts), with its event, in one document write.
   */
  async deactivate(
    licenseId: string,
    id: string,
    at: Date,
    event: (a: ActivationDoc) => DomainEvent,
    reason: DeactivationReason = 'requested',
  ): Promise<ActivationDoc | null> {
    const current = await this.models.Activation.findOne(
      { _id: id, license_id: licenseId, deactivated_at: null },
      { outbox: 0 },
    )
      .lean<ActivationDoc>()
      .exec();
    if (!current) return null;
    const after: ActivationDoc = {
      ...current,
      deactivated_at: at,
      deactivated_reason: reason,
      reclaim_bucket: null,
    };
    const res = await this.models.Activation.updateOne(
      { _id: id, deactivated_at: null },
      {
        $set: {
          deactivated_at: at,
          deactivated_reason: reason,
          reclaim_bucket: null,
          slot_key: `freed:${id}`,
          fingerprint_key: `freed:${id}`,
          ...withEvents([event(after)]),
        },
      },
    );
    if (res.modifiedCount !== 1) return null;
    return after;
  }

  /**
   * When the licence's newest customer deactivations after `since` were made, newest first, at most
   * `limit` (the policy's limit: what the verdict needs). One read on (license_id, reason, time).
   */
  async customerDeactivationsSince(licenseId: string, since: Date, limit: number): Promise<Date[]> {
    if (limit <= 0) return [];
    const docs = await this.models.Activation.find(
      { license_id: licenseId, deactivated_reason: 'customer', deactivated_at: { $gt: since } },
      { deactivated_at: 1 },
    )
      .sort({ deactivated_at: -1 })
      .limit(limit)
      .maxTimeMS(QUERY_MAX_MS)
      .lean<Pick<ActivationDoc, 'deactivated_at'>[]>()
      .exec();
    return docs.map((d) => d.deactivated_at!);
  }

  /**
   * Stores when a validation last named each machine (licence id → fingerprint → time): one bulk write
   * per flush of the validation counts, never one per validation, and never to the activations
   * themselves (SightingDoc says why).
   */
  async markSeen(seen: Map<string, Map<string, Date>>): Promise<void> {
    const active = await activeAmong(this.models, seen);
    const ops = [...active].flatMap(([licenseId, fingerprints]) =>
      [...fingerprints].map(([fingerprint, at]) => ({
        updateOne: {
          filter: { _id: sightingId(licenseId, fingerprint) },
          update: { $max: { last_seen_at: at }, $setOnInsert: { license_id: licenseId, fingerprint } },
          upsert: true,
        },
      })),
    );
    if (ops.length) await bulkUpdate(this.models.Sighting, ops); // a few statements per command (FerretDB)
  }
}

const sightingId = (licenseId: string, fingerprint: string) => `${licenseId}:${fingerprint}`;

/**
 * Of the machines validations named, those that are active activations of their licence: a sighting is
 * kept only for a machine the licence has (validations naming random fingerprints store nothing). One
 * read per licence on its (license_id, fingerprint_key) index, a few at a time.
 */
async function activeAmong(
  models: LicenseModels,
  seen: Map<string, Map<string, Date>>,
): Promise<Map<string, Map<string, Date>>> {
  const out = new Map<string, Map<string, Date>>();
  const licences = [...seen];
  let next = 0;
  const worker = async () => {
    while (next < licences.length) {
      const [licenseId, fingerprints] = licences[next++];
      const docs = await models.Activation.find(
        { license_id: licenseId, fingerprint_key: { $in: [...fingerprints.keys()] } },
        { fingerprint: 1 },
      )
        .maxTimeMS(QUERY_MAX_MS)
        .lean<Pick<ActivationDoc, 'fingerprint'>[]>()
        .exec();
      const kept = new Map(
        docs.flatMap((d) =>
          fingerprints.has(d.fingerprint) ? [[d.fingerprint, fingerprints.get(d.fingerprint)!]] : [],
        ) as [string, Date][],
      );
      if (kept.size) out.set(licenseId, kept);
    }
  };
  await Promise.all(Array.from({ length: Math.min(SIGHTING_READS_AT_ONCE, licences.length) }, worker));
  return out;
}

/** The later of the activation's heartbeat time and a validation's sighting made since it was activated. */
function latestSighting(a: ActivationDoc, sighted: Date | undefined): Date | null {
  const heartbeat = a.last_seen_at ?? null;
  if (!sighted || sighted < a.created_at) return heartbeat;
  return heartbeat && heartbeat > sighted ? heartbeat : sighted;
}

/**
 * The activations with last_seen_at as a reader is shown it: the later of the last heartbeat and the
 * last validation naming the fingerprint since the activation was made. One read of the licence's
 * sightings (an equality on license_id).
 */
async function withSightings(
  models: LicenseModels,
  licenseId: string,
  activations: ActivationDoc[],
): Promise<ActivationDoc[]> {
  if (!activations.length) return activations;
  const sightings = await models.Sighting.find(
    { license_id: licenseId, fingerprint: { $in: activations.map((a) => a.fingerprint) } },
    { fingerprint: 1, last_seen_at: 1 },
  )
    .maxTimeMS(QUERY_MAX_MS)
    .lean<Pick<SightingDoc, 'fingerprint' | 'last_seen_at'>[]>()
    .exec();
  const byFingerprint = new Map(sightings.map((s) => [s.fingerprint, s.last_seen_at]));
  return activations.map((a) => ({ ...a, last_seen_at: latestSighting(a, byFingerprint.get(a.fingerprint)) }));
}
