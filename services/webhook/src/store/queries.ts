import type { Model } from 'mongoose';
import { listPage, withEvents } from '@licensing/runtime';
import type { DomainEvent, PageRequest } from '@licensing/proto';
import type { EndpointDoc } from './models';

export class EndpointStore {
  constructor(readonly Endpoint: Model<EndpointDoc>) {}

  async insert(doc: EndpointDoc): Promise<void> {
    await this.Endpoint.create(doc);
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
    const res = await this.Endpoint.updateOne({ _id: id, enabled: true }, { $set: { enabled: false, ...withEvents([event]) } });
    return res.modifiedCount === 1;
  }

  async update(accountId: string, id: string, changes: Partial<EndpointDoc>): Promise<void> {
    await this.Endpoint.updateOne({ _id: id, account_id: accountId, deleted_at: null }, { $set: changes });
  }
}
