import { SLOT_ROUNDS, chooseSlot, countMatching, listPage, outboxOf, withEvents } from '@licensing/runtime';
import type { DomainEvent, PageRequest, Status } from '@licensing/proto';
import type { ActivationDoc, LicenseDoc, LicenseModels, SweepStateDoc } from './models';

// Everything but the outbox: the validation hot path reads one document.
const VALIDATION_FIELDS = { outbox: 0 };

const isDuplicate = (err: unknown) => (err as { code?: number })?.code === 11000;

/** No query here runs longer than this on the server (the gRPC deadline is 5 s). */
const QUERY_MAX_MS = 5000;

export class LicenseStore {
  constructor(readonly models: LicenseModels) {}

  async insert(doc: Omit<LicenseDoc, 'outbox'>, events: DomainEvent[]): Promise<void> {
    await this.models.License.create({ ...doc, ...outboxOf(events) });
  }

  /** By id, in one account (another account's is null). */
  findIdInAccount(accountId: string, id: string): Promise<LicenseDoc | null> {
    return this.models.License.findOne({ _id: id, account_id: accountId }, { outbox: 0 }).lean<LicenseDoc>().exec();
  }

  /** One read on the unique key index; account scoping is checked by the caller. */
  findByKey(key: string): Promise<LicenseDoc | null> {
    return this.models.License.findOne({ key }, VALIDATION_FIELDS).lean<LicenseDoc>().exec();
  }

  findInAccount(accountId: string, key: string): Promise<LicenseDoc | null> {
    return this.models.License.findOne({ key, account_id: accountId }, { outbox: 0 }).lean<LicenseDoc>().exec();
  }

  count(accountId: string): Promise<number> {
    return countMatching(this.models.License, { account_id: accountId });
  }

  list(
    accountId: string,
    filter: { productId: string; customerEmail: string; status: Status | '' },
    page: PageRequest | undefined,
    now: Date,
  ) {
    const byStatus: Record<Status, Record<string, unknown>> = {
      active: { status: 'active', $or: [{ grace_ends_at: null }, { grace_ends_at: { $gt: now } }] },
      expired: { status: 'active', grace_ends_at: { $lte: now } },
      suspended: { status: 'suspended' },
      revoked: { status: 'revoked' },
    };
    return listPage<LicenseDoc>(
      this.models.License,
      {
        account_id: accountId,
        ...(filter.productId ? { product_id: filter.productId } : {}),
        ...(filter.customerEmail ? { customer_email_lc: filter.customerEmail.trim().toLowerCase() } : {}),
        ...(filter.status ? byStatus[filter.status] : {}),
      },
      page,
    );
  }

  /** Writes a changed licence only if it is still as it was read (no lost update), with its event. */
  async replaceState(before: LicenseDoc, changes: Partial<LicenseDoc>, events: DomainEvent[]): Promise<boolean> {
    const res = await this.models.License.updateOne(
      { _id: before._id, status: before.status, expires_at: before.expires_at },
      { $set: { ...changes, ...withEvents(events) } },
    );
    return res.modifiedCount === 1;
  }

  /** The licences of one expiry bucket, by id after `after` (one equality on an index; sorted within the bucket). */
  inExpiryBucket(bucket: string, after: string, limit: number): Promise<LicenseDoc[]> {
    const filter = after ? { expiry_bucket: bucket, _id: { $gt: after } } : { expiry_bucket: bucket };
    return this.models.License.find(filter, { outbox: 0 }).sort({ _id: 1 }).limit(limit).lean<LicenseDoc[]>().exec();
  }

  /** Catching up (after downtime, or a clock moved on): every licence filed from `first` to `last`, in index order. */
  async *inExpiryRange(first: string, last: string): AsyncGenerator<LicenseDoc> {
    const cursor = this.models.License.find({ expiry_bucket: { $gte: first, $lte: last } }, { outbox: 0 })
      .sort({ expiry_bucket: 1, _id: 1 })
      .lean<LicenseDoc>()
      .cursor();
    for await (const doc of cursor) yield doc as LicenseDoc;
  }

  /** Marks one licence expired-and-published; false if another instance did first. */
  async markExpired(id: string, event: DomainEvent): Promise<boolean> {
    const res = await this.models.License.updateOne(
      { _id: id, expired_notified: { $ne: true } },
      { $set: { expired_notified: true, expiry_bucket: null, ...withEvents([event]) } },
    );
    return res.modifiedCount === 1;
  }

  async sweepState(id: string): Promise<SweepStateDoc> {
    return (
      (await this.models.SweepState.findOne({ _id: id }).lean<SweepStateDoc>().exec()) ?? {
        _id: id,
        through: null,
        backfilled: false,
      }
    );
  }

  async saveSweepState(state: SweepStateDoc): Promise<void> {
    await this.models.SweepState.updateOne(
      { _id: state._id },
      { $set: { through: state.through, backfilled: state.backfilled } },
      { upsert: true },
    );
  }

  /**
   * Once per database: licences stored before expiry buckets existed get theirs.
   * One pass over the collection, the only one this sweeper ever makes.
   */
  async backfillExpiryBuckets(bucketFor: (doc: LicenseDoc) => string | null): Promise<string | null> {
    let earliest: string | null = null;
    const cursor = this.models.License.find({ expiry_bucket: { $exists: false } }, { outbox: 0 })
      .lean<LicenseDoc>()
      .cursor();
    for await (const doc of cursor) {
      const bucket = bucketFor(doc as LicenseDoc);
      await this.models.License.updateOne(
        { _id: doc._id, expiry_bucket: { $exists: false } },
        { $set: { expiry_bucket: bucket } },
      );
      if (bucket && (!earliest || bucket < earliest)) earliest = bucket;
    }
    return earliest;
  }

  // Activations

  findActivation(licenseId: string, fingerprint: string): Promise<ActivationDoc | null> {
    return this.models.Activation.findOne({ license_id: licenseId, fingerprint_key: fingerprint }, { outbox: 0 })
      .lean<ActivationDoc>()
      .exec();
  }

  /** Inserts into the first free slot; null when every slot is taken. An existing activation of the fingerprint wins. */
  /**
   * Takes a free slot for a new activation with a constant number of store
   * operations, whatever max_activations is: one count (a full licence is
   * refused there), then at most SLOT_ROUNDS rounds of one read of the taken
   * slots and one unique insert (plus one fingerprint look-up when it
   * collides). 'contended' when every round lost a race while slots were free.
   */
  async activate(
    doc: Omit<ActivationDoc, 'slot_key' | 'outbox'>,
    maxActivations: number | null,
    events: DomainEvent[],
  ): Promise<{ activation: ActivationDoc; created: boolean } | null | 'contended'> {
    const insert = async (slot: string) => {
      const activation = { ...doc, slot_key: slot };
      await this.models.Activation.create({ ...activation, ...outboxOf(events) });
      return { activation, created: true };
    };
    if (maxActivations === null) return insert(doc._id);
    if ((await this.countActivations(doc.license_id)) >= maxActivations) return null;
    for (let round = 0; round < SLOT_ROUNDS; round++) {
      const taken = await this.models.Activation.find(
        { license_id: doc.license_id, deactivated_at: null },
        { slot_key: 1 },
      )
        .maxTimeMS(QUERY_MAX_MS)
        .lean<Pick<ActivationDoc, 'slot_key'>[]>()
        .exec();
      const slot = chooseSlot(new Set(taken.map((a) => a.slot_key)), maxActivations);
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

  listActivations(licenseId: string, page: PageRequest | undefined) {
    return listPage<ActivationDoc>(this.models.Activation, { license_id: licenseId, deactivated_at: null }, page);
  }

  /** The fingerprints of up to `limit` active machines (what a cached validation compares against). */
  async activeFingerprints(licenseId: string, limit: number): Promise<string[]> {
    const docs = await this.models.Activation.find({ license_id: licenseId, deactivated_at: null }, { fingerprint: 1 })
      .limit(limit)
      .lean<Pick<ActivationDoc, 'fingerprint'>[]>()
      .exec();
    return docs.map((d) => d.fingerprint);
  }

  countActivations(licenseId: string): Promise<number> {
    return this.models.Activation.countDocuments({ license_id: licenseId, deactivated_at: null })
      .maxTimeMS(QUERY_MAX_MS)
      .exec();
  }

  /** Frees the slot and the fingerprint, keeping the record, with its event. */
  async deactivate(
    licenseId: string,
    id: string,
    at: Date,
    event: (a: ActivationDoc) => DomainEvent,
  ): Promise<ActivationDoc | null> {
    const current = await this.models.Activation.findOne(
      { _id: id, license_id: licenseId, deactivated_at: null },
      { outbox: 0 },
    )
      .lean<ActivationDoc>()
      .exec();
    if (!current) return null;
    const after = { ...current, deactivated_at: at };
    const res = await this.models.Activation.updateOne(
      { _id: id, deactivated_at: null },
      {
        $set: {
          deactivated_at: at,
          slot_key: `freed:${id}`,
          fingerprint_key: `freed:${id}`,
          ...withEvents([event(after)]),
        },
      },
    );
    if (res.modifiedCount !== 1) return null;
    return after;
  }
}
