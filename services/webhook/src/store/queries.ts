import type { Model } from 'mongoose';
import { SLOT_ROUNDS, chooseSlot, listPage, withEvents } from '@licensing/runtime';
import type { DomainEvent, PageRequest } from '@licensing/proto';
import type { EndpointDoc } from './models';

export class EndpointStore {
  constructor(readonly Endpoint: Model<EndpointDoc>) {}

  /** Told the account after every write to one of its endpoints (the EndpointCache forgets it). */
  onWrite: (accountId: string) => void = () => undefined;

  /**
   * Inserts a new endpoint into a free slot of the account's `max`, with a
   * constant number of store operations: one count (a full account is refused
   * there), then at most SLOT_ROUNDS rounds of one read of the taken slots and
   * one unique insert. null: the account is full; 'contended': every round lost
   * a race while slots were free.
   */
  async insertWithinCap(doc: Omit<EndpointDoc, 'slot_key'>, max: number): Promise<EndpointDoc | null | 'contended'> {
    if ((await this.countOf(doc.account_id)) >= max) return null;
    for (let round = 0; round < SLOT_ROUNDS; round++) {
      const taken = await this.Endpoint.find({ account_id: doc.account_id, deleted_at: null }, { slot_key: 1 })
        .lean<Pick<EndpointDoc, 'slot_key'>[]>()
        .exec();
      const slot = chooseSlot(new Set(taken.map((e) => e.slot_key)), max);
      if (slot === null) return null;
      try {
        const stored = { ...doc, slot_key: slot };
        await this.Endpoint.create(stored);
        this.onWrite(doc.account_id);
        return stored;
      } catch (err) {
        if ((err as { code?: number })?.code !== 11000) throw err; // else the slot was just taken: choose again
      }
    }
    return 'contended';
  }

  /** Endpoints the account has (deleted ones excluded). */
  countOf(accountId: string): Promise<number> {
    return this.Endpoint.countDocuments({ account_id: accountId, deleted_at: null }).maxTimeMS(5000).exec();
  }

  /** Scoped by account; deleted endpoints are gone for the API. */
  find(accountId: string, id: string): Promise<EndpointDoc | null> {
    return this.Endpoint.findOne({ _id: id, account_id: accountId, deleted_at: null }).lean<EndpointDoc>().exec();
  }

  enabledOf(accountId: string): Promise<EndpointDoc[]> {
    return this.Endpoint.find({ account_id: accountId, enabled: true, deleted_at: null }).lean<EndpointDoc[]>().exec();
  }

  byId(id: string): Promise<EndpointDoc | null> {
    return this.Endpoint.findOne({ _id: id, deleted_at: null }).lean<EndpointDoc>().exec();
  }

  list(accountId: string, page: PageRequest | undefined) {
    return listPage<EndpointDoc>(this.Endpoint, { account_id: accountId, deleted_at: null }, page);
  }

  /** Disables an enabled endpoint, recording webhook.disabled in the same write; false if it already was. */
  async disable(id: string, event: DomainEvent): Promise<boolean> {
    const res = await this.Endpoint.updateOne(
      { _id: id, enabled: true },
      { $set: { enabled: false, ...withEvents([event]) } },
    );
    this.onWrite(event.account_id);
    return res.modifiedCount === 1;
  }

  /** Marks the endpoint deleted and frees its slot for a new one. */
  async remove(accountId: string, id: string, at: Date): Promise<void> {
    await this.update(accountId, id, { deleted_at: at, enabled: false, slot_key: `freed:${id}` });
  }

  async update(accountId: string, id: string, changes: Partial<EndpointDoc>): Promise<void> {
    await this.Endpoint.updateOne({ _id: id, account_id: accountId, deleted_at: null }, { $set: changes });
    this.onWrite(accountId);
  }
}
