import type { DomainEvent, PageRequest } from '@licensing/proto';
import type { DeliveryDoc, DeliveryStore } from '../../../services/webhook/src/store/deliveries';
import type { EndpointDoc } from '../../../services/webhook/src/store/models';
import type { EndpointStore } from '../../../services/webhook/src/store/queries';
import { modelToken, pageOf } from './common';

/** In memory, with the real EndpointStore's scoping (account, not deleted) and its cap. */
export class FakeEndpointStore implements EndpointStore {
  readonly Endpoint = modelToken<EndpointDoc>('WebhookEndpoint');
  readonly docs = new Map<string, EndpointDoc>();
  readonly events: DomainEvent[] = [];
  /** Every update(), in order. */
  readonly updates: { accountId: string; id: string; changes: Partial<EndpointDoc> }[] = [];
  /** Set to make every slot race lost (other creations at the same moment). */
  contended = false;
  /** Each enabledOf() asked, by account. */
  readonly enabledAsked: string[] = [];
  onWrite: (accountId: string) => void = () => undefined;

  private live = (accountId: string) =>
    [...this.docs.values()].filter((d) => d.account_id === accountId && d.deleted_at === null);

  async insertWithinCap(doc: Omit<EndpointDoc, 'slot_key'>, max: number): Promise<EndpointDoc | null | 'contended'> {
    const taken = new Set(this.live(doc.account_id).map((d) => d.slot_key));
    if (taken.size >= max) return null;
    if (this.contended) return 'contended';
    const slot = Array.from({ length: max }, (_, i) => String(i + 1)).find((s) => !taken.has(s))!;
    const stored = { ...doc, slot_key: slot };
    this.docs.set(doc._id, structuredClone(stored));
    this.onWrite(doc.account_id);
    return stored;
  }

  async countOf(accountId: string): Promise<number> {
    return this.live(accountId).length;
  }

  async find(accountId: string, id: string): Promise<EndpointDoc | null> {
    const d = this.docs.get(id);
    return d && d.account_id === accountId && d.deleted_at === null ? structuredClone(d) : null;
  }

  async enabledOf(accountId: string): Promise<EndpointDoc[]> {
    this.enabledAsked.push(accountId);
    return this.live(accountId).filter((d) => d.enabled);
  }

  async byId(id: string): Promise<EndpointDoc | null> {
    const d = this.docs.get(id);
    return d && d.deleted_at === null ? structuredClone(d) : null;
  }

  async list(accountId: string, page: PageRequest | undefined) {
    return pageOf(this.live(accountId), page);
  }

  async disable(id: string, event: DomainEvent): Promise<boolean> {
    const d = this.docs.get(id);
    if (!d?.enabled) return false;
    d.enabled = false;
    this.events.push(event);
    this.onWrite(event.account_id);
    return true;
  }

  async remove(accountId: string, id: string, at: Date): Promise<void> {
    await this.update(accountId, id, { deleted_at: at, enabled: false, slot_key: `freed:${id}` });
  }

  async update(accountId: string, id: string, changes: Partial<EndpointDoc>): Promise<void> {
    this.updates.push({ accountId, id, changes });
    const d = this.docs.get(id);
    if (d && d.account_id === accountId && d.deleted_at === null) Object.assign(d, structuredClone(changes));
    this.onWrite(accountId);
  }
}

/** In memory, one delivery per id as the real DeliveryStore's unique _id gives. */
export class FakeDeliveryStore implements DeliveryStore {
  readonly Delivery = modelToken<DeliveryDoc>('WebhookDelivery');
  readonly docs = new Map<string, DeliveryDoc>();

  /** Each recordAll(), in order: how many documents it was given. */
  readonly inserts: number[] = [];

  async record(doc: DeliveryDoc): Promise<void> {
    if (!this.docs.has(doc._id)) this.docs.set(doc._id, structuredClone(doc));
  }

  async recordAll(docs: DeliveryDoc[]): Promise<DeliveryDoc[]> {
    if (!docs.length) return [];
    this.inserts.push(docs.length);
    return docs.filter((d) => !this.docs.has(d._id) && !!this.docs.set(d._id, structuredClone(d)));
  }

  async updateAll(changes: { id: string; changes: Partial<DeliveryDoc> }[]): Promise<void> {
    for (const c of changes) await this.update(c.id, c.changes);
  }

  async bodiesMatching(accountId: string, pattern: string, after: string, limit: number) {
    const window = [...this.docs.values()]
      .filter((d) => d.account_id === accountId && (!after || d._id > after))
      .sort((a, b) => (a._id < b._id ? -1 : 1))
      .slice(0, limit);
    const re = new RegExp(pattern, 'i');
    return {
      matches: window.filter((d) => re.test(d.body)).map((d) => ({ _id: d._id, body: d.body })),
      last: window.length < limit ? null : window[window.length - 1]._id,
    };
  }

  async replaceBody(id: string, from: string, to: string): Promise<boolean> {
    const d = this.docs.get(id);
    if (!d || d.body !== from) return false;
    d.body = to;
    return true;
  }

  async due(now: Date, limit: number, busyEndpoints: string[] = []): Promise<DeliveryDoc[]> {
    return [...this.docs.values()]
      .filter(
        (d) =>
          d.status === 'pending' &&
          d.next_attempt_at &&
          d.next_attempt_at <= now &&
          !busyEndpoints.includes(d.endpoint_id),
      )
      .sort((a, b) => a.next_attempt_at!.getTime() - b.next_attempt_at!.getTime())
      .slice(0, limit);
  }

  async prune(before: Date): Promise<number> {
    const gone = [...this.docs.values()].filter((d) => d.status !== 'pending' && d.created_at < before);
    for (const d of gone) this.docs.delete(d._id);
    return gone.length;
  }

  async update(id: string, changes: Partial<DeliveryDoc>): Promise<void> {
    const d = this.docs.get(id);
    if (d) Object.assign(d, structuredClone(changes));
  }

  async find(endpointId: string, id: string): Promise<DeliveryDoc | null> {
    const d = this.docs.get(id);
    return d && d.endpoint_id === endpointId ? structuredClone(d) : null;
  }

  async list(endpointId: string, page: PageRequest | undefined) {
    return pageOf(
      [...this.docs.values()].filter((d) => d.endpoint_id === endpointId),
      page,
    );
  }
}
