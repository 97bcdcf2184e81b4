import type { Model } from 'mongoose';
import { listPage } from '@licensing/runtime';
import type { PageRequest } from '@licensing/proto';
import type { EndpointDoc } from './models';

export class EndpointStore {
  constructor(readonly Endpoint: Model<EndpointDoc>) {}

  async insert(doc: EndpointDoc): Promise<void> {
    await this.Endpoint.create(doc);
  }

  /** Scoped by account; deleted endpoints are gone for the API. */
  find(accountId: string, id: string): Promise<EndpointDoc | null> {
    return this.Endpoint.findOne({ _id: id, account_id: accountId, deleted_at: null }).lean<EndpointDoc>().exec();
  }

  list(accountId: string, page: PageRequest | undefined) {
    return listPage<EndpointDoc>(this.Endpoint, { account_id: accountId, deleted_at: null }, page);
  }

  async update(accountId: string, id: string, changes: Partial<EndpointDoc>): Promise<void> {
    await this.Endpoint.updateOne({ _id: id, account_id: accountId, deleted_at: null }, { $set: changes });
  }
}
