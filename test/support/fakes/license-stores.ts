import type { DeactivationReason, DomainEvent, PageRequest, Status } from '@licensing/proto';
import type { HourBucket } from '../../../services/license/src/domain/stats';
import type {
  ActivationDoc,
  ErasureDoc,
  LicenseDoc,
  LicenseModels,
  SweepStateDoc,
} from '../../../services/license/src/store/models';
import type { LicenseStore } from '../../../services/license/src/store/queries';
import type { BatchItemDoc } from '../../../services/license/src/transfer/store/batches';
import type { ValidationCounter } from '../../../services/license/src/jobs/validation-counter';
import { FakeIdempotencyModel } from './checkout-store';
import { duplicateKey, modelToken, pageOf } from './common';

/** In memory, with the real LicenseStore's scoping, its conditional writes and its activation slots. */
export class FakeLicenseStore implements LicenseStore {
  readonly idempotency = new FakeIdempotencyModel();
  readonly models = {
    License: modelToken<LicenseDoc>('License'),
    Activation: modelToken<ActivationDoc>('Activation'),
    SweepState: modelToken<SweepStateDoc>('SweepState'),
    Erasure: modelToken<ErasureDoc>('Erasure'),
    Idempotency: this.idempotency,
  } as unknown as LicenseModels;
  readonly licenses = new Map<string, LicenseDoc>();
  readonly activations = new Map<string, ActivationDoc>();
  readonly sweeps = new Map<string, SweepStateDoc>();
  readonly erasures: Omit<ErasureDoc, 'outbox'>[] = [];
  /** The events each write recorded along with it, in order (the real documents' outbox). */
  readonly events: DomainEvent[] = [];
  /** How many of the next inserts meet a duplicate key (the unique index on the licence key). */
  duplicateInserts = 0;
  /** How many of the next replaceState calls lose to another writer. */
  lostRaces = 0;
  /** Set to make every activation slot race lost. */
  contended = false;
  /** How many activations from now on lose their slot race before one wins (each store call is one). */
  contendedCalls = 0;
  /** Every activate call, in order (how many attempts a use case made). */
  activateCalls = 0;
  /** Every replaceState call, in order. */
  readonly replaces: { id: string; changes: Partial<LicenseDoc> }[] = [];

  async insert(doc: Omit<LicenseDoc, 'outbox'>, events: DomainEvent[]): Promise<void> {
    if (this.duplicateInserts > 0) {
      this.duplicateInserts--;
      throw duplicateKey();
    }
    if (this.licenses.has(doc._id) || [...this.licenses.values()].some((l) => l.key === doc.key)) throw duplicateKey();
    this.licenses.set(doc._id, structuredClone(doc));
    this.events.push(...events);
  }

  async findByKey(key: string): Promise<LicenseDoc | null> {
    const l = [...this.licenses.values()].find((d) => d.key === key);
    return l ? structuredClone(l) : null;
  }

  async findIdInAccount(accountId: string, id: string): Promise<LicenseDoc | null> {
    const l = this.licenses.get(id);
    return l?.account_id === accountId ? structuredClone(l) : null;
  }

  async findInAccount(accountId: string, key: string): Promise<LicenseDoc | null> {
    const l = await this.findByKey(key);
    return l?.account_id === accountId ? l : null;
  }

  async count(accountId: string): Promise<number> {
    return [...this.licenses.values()].filter((l) => l.account_id === accountId).length;
  }

  async holdsLicences(accountId: string, emailLc: string): Promise<boolean> {
    return [...this.licenses.values()].some((l) => l.account_id === accountId && l.customer_email_lc === emailLc);
  }

  async list(
    accountId: string,
    filter: { productId: string; customerEmail: string; status: Status | '' },
    page: PageRequest | undefined,
    now: Date,
  ) {
    const live = (l: LicenseDoc) => !l.grace_ends_at || l.grace_ends_at > now;
    const byStatus: Record<Status, (l: LicenseDoc) => boolean> = {
      active: (l) => l.status === 'active' && live(l),
      expired: (l) => l.status === 'active' && !live(l),
      suspended: (l) => l.status === 'suspended',
      revoked: (l) => l.status === 'revoked',
    };
    return pageOf(
      [...this.licenses.values()].filter(
        (l) =>
          l.account_id === accountId &&
          (!filter.productId || l.product_id === filter.productId) &&
          (!filter.customerEmail || l.customer_email_lc === filter.customerEmail.trim().toLowerCase()) &&
          (!filter.status || byStatus[filter.status](l)),
      ),
      page,
    );
  }

  /** A reroll's write: the new key only if the licence still has the one read (a taken key: a duplicate). */
  async replaceKey(before: LicenseDoc, changes: Partial<LicenseDoc>, events: DomainEvent[]): Promise<boolean> {
    const l = this.licenses.get(before._id);
    if (!l || l.key !== before.key) return false;
    if (changes.key && [...this.licenses.values()].some((d) => d._id !== l._id && d.key === changes.key))
      throw duplicateKey();
    Object.assign(l, structuredClone(changes));
    this.events.push(...events);
    return true;
  }

  async replaceState(before: LicenseDoc, changes: Partial<LicenseDoc>, events: DomainEvent[]): Promise<boolean> {
    this.replaces.push({ id: before._id, changes: structuredClone(changes) });
    if (this.lostRaces > 0) {
      this.lostRaces--;
      return false;
    }
    const l = this.licenses.get(before._id);
    if (!l || l.status !== before.status || l.expires_at?.getTime() !== before.expires_at?.getTime()) return false;
    Object.assign(l, structuredClone(changes));
    this.events.push(...events);
    return true;
  }

  async inExpiryBucket(bucket: string, after: string, limit: number): Promise<LicenseDoc[]> {
    return [...this.licenses.values()]
      .filter((l) => l.expiry_bucket === bucket && (!after || l._id > after))
      .sort((a, b) => (a._id < b._id ? -1 : 1))
      .slice(0, limit)
      .map((l) => structuredClone(l));
  }

  async *inExpiryRange(first: string, last: string): AsyncGenerator<LicenseDoc> {
    const docs = [...this.licenses.values()].filter(
      (l) => l.expiry_bucket !== null && l.expiry_bucket >= first && l.expiry_bucket <= last,
    );
    for (const l of docs) yield structuredClone(l);
  }

  async markExpired(id: string, event: DomainEvent): Promise<boolean> {
    const l = this.licenses.get(id);
    if (!l || l.expired_notified) return false;
    Object.assign(l, { expired_notified: true, expiry_bucket: null });
    this.events.push(event);
    return true;
  }

  async markRevokedAtExpiry(doc: Pick<LicenseDoc, '_id' | 'expires_at'>, events: DomainEvent[]): Promise<boolean> {
    const l = this.licenses.get(doc._id);
    if (!l || l.expired_notified || l.status !== 'active' || l.expires_at?.getTime() !== doc.expires_at?.getTime())
      return false;
    Object.assign(l, { status: 'revoked', expired_notified: true, expiry_bucket: null });
    this.events.push(...events);
    return true;
  }

  async sweepState(id: string): Promise<SweepStateDoc> {
    return this.sweeps.get(id) ?? { _id: id, through: null, backfilled: false };
  }

  async saveSweepState(state: SweepStateDoc): Promise<void> {
    this.sweeps.set(state._id, { ...state });
  }

  async backfillExpiryBuckets(): Promise<string | null> {
    return null;
  }

  async earliestFiledBucket(): Promise<string | null> {
    const filed = [...this.licenses.values()].flatMap((l) => (l.expiry_bucket ? [l.expiry_bucket] : [])).sort();
    return filed[0] ?? null;
  }

  private liveActivations = (licenseId: string) =>
    [...this.activations.values()].filter((a) => a.license_id === licenseId && a.deactivated_at === null);

  async findActivation(licenseId: string, fingerprint: string): Promise<ActivationDoc | null> {
    const a = [...this.activations.values()].find(
      (x) => x.license_id === licenseId && x.fingerprint_key === fingerprint,
    );
    return a ? structuredClone(a) : null;
  }

  async activate(
    doc: Omit<ActivationDoc, 'slot_key' | 'outbox'>,
    maxActivations: number | null,
    events: DomainEvent[],
    reclaim?: { now: Date; event: (a: ActivationDoc) => DomainEvent; reclaimed: (a: ActivationDoc) => void },
  ): Promise<{ activation: ActivationDoc; created: boolean } | null | 'contended'> {
    if (reclaim && maxActivations !== null && this.liveActivations(doc.license_id).length >= maxActivations)
      for (const a of this.liveActivations(doc.license_id)) {
        if (!a.lease_expires_at || a.lease_expires_at > reclaim.now) continue;
        const freed = await this.reclaimLapsed(a._id, a.lease_expires_at, reclaim.now, reclaim.event);
        if (freed) reclaim.reclaimed(freed);
      }
    const taken = new Set(this.liveActivations(doc.license_id).map((a) => a.slot_key));
    if (maxActivations !== null && taken.size >= maxActivations) return null;
    this.activateCalls++;
    if (this.contended) return 'contended';
    if (this.contendedCalls > 0) {
      this.contendedCalls--;
      return 'contended';
    }
    const slot =
      maxActivations === null
        ? doc._id
        : Array.from({ length: maxActivations }, (_, i) => String(i)).find((s) => !taken.has(s))!;
    const activation = { ...doc, slot_key: slot };
    this.activations.set(doc._id, structuredClone(activation));
    this.events.push(...events);
    return { activation, created: true };
  }

  async listActivations(licenseId: string, page: PageRequest | undefined) {
    return pageOf(this.liveActivations(licenseId), page);
  }

  async activeSeats(licenseId: string, limit: number) {
    return this.liveActivations(licenseId)
      .slice(0, limit)
      .map((a) => ({ fingerprint: a.fingerprint, leaseEndsAt: a.lease_expires_at?.getTime() ?? null }));
  }

  async reclaimLapsed(
    id: string,
    leaseExpiresAt: Date,
    at: Date,
    event: (a: ActivationDoc) => DomainEvent,
  ): Promise<ActivationDoc | null> {
    const current = this.activations.get(id);
    if (!current || current.deactivated_at !== null || current.lease_expires_at?.getTime() !== leaseExpiresAt.getTime())
      return null;
    const after: ActivationDoc = {
      ...structuredClone(current),
      deactivated_at: at,
      deactivated_reason: 'lapsed',
      reclaim_bucket: null,
    };
    Object.assign(current, {
      deactivated_at: at,
      deactivated_reason: 'lapsed',
      reclaim_bucket: null,
      slot_key: `freed:${id}`,
      fingerprint_key: `freed:${id}`,
    });
    this.events.push(event(after));
    return after;
  }

  async renewLease(
    current: ActivationDoc,
    until: Date,
    reclaimBucket: string,
    seenAt: Date,
  ): Promise<ActivationDoc | null> {
    const stored = this.activations.get(current._id);
    if (
      !stored ||
      stored.deactivated_at !== null ||
      (stored.lease_expires_at?.getTime() ?? null) !== (current.lease_expires_at?.getTime() ?? null)
    )
      return null;
    Object.assign(stored, { lease_expires_at: until, reclaim_bucket: reclaimBucket });
    if (!stored.last_seen_at || stored.last_seen_at < seenAt) stored.last_seen_at = seenAt;
    return structuredClone(stored);
  }

  async renewRunningLease(licenseId: string, id: string, now: Date, until: Date, reclaimBucket: string) {
    const a = this.activations.get(id);
    if (
      !a ||
      a.license_id !== licenseId ||
      a.deactivated_at !== null ||
      !a.lease_expires_at ||
      a.lease_expires_at <= now
    )
      return null;
    Object.assign(a, { lease_expires_at: until, reclaim_bucket: reclaimBucket });
    if (!a.last_seen_at || a.last_seen_at < now) a.last_seen_at = now;
    return structuredClone(a);
  }

  async findAnyActivation(licenseId: string, id: string): Promise<ActivationDoc | null> {
    const a = this.activations.get(id);
    return a && a.license_id === licenseId ? structuredClone(a) : null;
  }

  async inReclaimBucket(bucket: string, after: string, limit: number): Promise<ActivationDoc[]> {
    return [...this.activations.values()]
      .filter((a) => a.reclaim_bucket === bucket && a._id > after)
      .sort((a, b) => (a._id < b._id ? -1 : 1))
      .slice(0, limit)
      .map((a) => structuredClone(a));
  }

  async countActivations(licenseId: string): Promise<number> {
    return this.liveActivations(licenseId).length;
  }

  async activeMachines(licenseId: string): Promise<ActivationDoc[]> {
    return this.liveActivations(licenseId).map((a) => structuredClone(a));
  }

  /** The real store moves machines into slots 1..max (a unique index holds them); here: numbered in order. */
  async moveIntoSlots(licenseId: string, max: number): Promise<void> {
    const live = this.liveActivations(licenseId);
    live.forEach((a, i) => {
      if (i < max) this.activations.get(a._id)!.slot_key = String(i + 1);
    });
  }

  async deactivate(
    licenseId: string,
    id: string,
    at: Date,
    event: (a: ActivationDoc) => DomainEvent,
    reason: DeactivationReason = 'requested',
  ): Promise<ActivationDoc | null> {
    const current = this.activations.get(id);
    if (!current || current.license_id !== licenseId || current.deactivated_at !== null) return null;
    const after: ActivationDoc = { ...structuredClone(current), deactivated_at: at, deactivated_reason: reason };
    Object.assign(current, {
      deactivated_at: at,
      deactivated_reason: reason,
      reclaim_bucket: null,
      slot_key: `freed:${id}`,
      fingerprint_key: `freed:${id}`,
    });
    this.events.push(event(after));
    return after;
  }

  async customerDeactivationsSince(licenseId: string, since: Date, limit: number): Promise<Date[]> {
    return [...this.activations.values()]
      .filter((a) => a.license_id === licenseId && a.deactivated_reason === 'customer' && a.deactivated_at! > since)
      .map((a) => a.deactivated_at!)
      .sort((a, b) => b.getTime() - a.getTime())
      .slice(0, Math.max(0, limit));
  }

  async markSeen(seen: Map<string, Map<string, Date>>): Promise<void> {
    for (const [licenseId, machines] of seen)
      for (const [fingerprint, at] of machines)
        for (const a of this.activations.values())
          if (
            a.license_id === licenseId &&
            a.fingerprint_key === fingerprint &&
            (!a.last_seen_at || a.last_seen_at < at)
          )
            a.last_seen_at = at;
  }

  async licensesOfCustomer(accountId: string, emailLc: string, after: string, limit: number): Promise<LicenseDoc[]> {
    return [...this.licenses.values()]
      .filter((l) => l.account_id === accountId && l.customer_email_lc === emailLc && (!after || l._id > after))
      .sort((a, b) => (a._id < b._id ? -1 : 1))
      .slice(0, limit)
      .map((l) => structuredClone(l));
  }

  async activationsNamed(licenseId: string, pattern: string) {
    const re = new RegExp(pattern, 'i');
    return [...this.activations.values()]
      .filter((a) => a.license_id === licenseId && re.test(a.name))
      .map((a) => ({ _id: a._id, name: a.name }));
  }

  async renameActivation(id: string, from: string, to: string): Promise<void> {
    const a = this.activations.get(id);
    if (a && a.name === from) a.name = to;
  }

  async replaceCustomerEmail(before: LicenseDoc, placeholder: string, events: DomainEvent[]): Promise<boolean> {
    const l = this.licenses.get(before._id);
    if (!l || l.customer_email_lc !== before.customer_email_lc) return false;
    Object.assign(l, { customer_email: placeholder, customer_email_lc: placeholder.toLowerCase() });
    this.events.push(...events);
    return true;
  }

  async insertErasure(doc: Omit<ErasureDoc, 'outbox'>, events: DomainEvent[]): Promise<void> {
    this.erasures.push(structuredClone(doc));
    this.events.push(...events);
  }

  readonly deletions = new Set<string>();

  async insertDeletion(doc: { _id: string }, events: DomainEvent[]): Promise<boolean> {
    if (this.deletions.has(doc._id)) return false;
    this.deletions.add(doc._id);
    this.events.push(...events);
    return true;
  }

  async deleteLicense(licenseId: string): Promise<void> {
    for (const [id, a] of this.activations) if (a.license_id === licenseId) this.activations.delete(id);
    this.licenses.delete(licenseId);
  }
}

/** The validation counts a licence's reads need: when it was last validated, and the hourly buckets. */
export class FakeValidationCounter implements Pick<ValidationCounter, 'lastValidatedAt' | 'since'> {
  readonly lastValidated = new Map<string, Date>();
  readonly buckets: (HourBucket & { accountId: string })[] = [];

  async lastValidatedAt(licenseId: string): Promise<Date | null> {
    return this.lastValidated.get(licenseId) ?? null;
  }

  async since(accountId: string, from: Date): Promise<HourBucket[]> {
    return this.buckets.filter((b) => b.accountId === accountId && b.hour >= from).map(({ accountId: _a, ...b }) => b);
  }
}

/** Licence batches as an erasure sees them, in memory, with the real store's conditions. */
export class FakeBatchEmails {
  readonly rows = new Map<
    string,
    { _id: string; account_id: string; items: BatchItemDoc[]; customer_emails_lc?: string[] | null }
  >();

  add(id: string, accountId: string, emails: string[], withList = true): void {
    const items = emails.map(
      (customer_email, i) =>
        ({
          customer_email,
          metadata: {},
          entitlements: [],
          send_email: true,
          license_id: `lic_${id}_${i}`,
          status: 'issued',
          key: `KEY-${id}-${i}`,
          error: null,
        }) as BatchItemDoc,
    );
    this.rows.set(id, {
      _id: id,
      account_id: accountId,
      items,
      ...(withList ? { customer_emails_lc: [...new Set(emails.map((e) => e.toLowerCase()))] } : {}),
    });
  }

  private page(
    match: (r: { customer_emails_lc?: string[] | null }) => boolean,
    accountId: string,
    after: string,
    limit: number,
  ) {
    return [...this.rows.values()]
      .filter((r) => r.account_id === accountId && match(r) && (!after || r._id > after))
      .sort((a, b) => a._id.localeCompare(b._id))
      .slice(0, limit)
      .map((r) => structuredClone({ _id: r._id, items: r.items }));
  }

  async batchesWithoutEmailList(accountId: string, after: string, limit: number) {
    return this.page((r) => r.customer_emails_lc == null, accountId, after, limit);
  }

  async giveEmailList(id: string, emails: string[]): Promise<void> {
    const r = this.rows.get(id);
    if (r && r.customer_emails_lc == null) r.customer_emails_lc = emails;
  }

  async batchesOfCustomer(accountId: string, emailLc: string, after: string, limit: number) {
    return this.page((r) => !!r.customer_emails_lc?.includes(emailLc), accountId, after, limit);
  }

  async replaceItemEmails(id: string, emailLc: string, items: BatchItemDoc[], emails: string[]): Promise<boolean> {
    const r = this.rows.get(id);
    if (!r?.customer_emails_lc?.includes(emailLc)) return false;
    Object.assign(r, { items: structuredClone(items), customer_emails_lc: emails });
    return true;
  }
}
