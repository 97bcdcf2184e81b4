import type { DomainEvent, PageRequest } from '@licensing/proto';
import type { ProductDoc } from '../../../services/product/src/store/models';
import type { ProductStore } from '../../../services/product/src/store/queries';
import type { SigningKeyDoc, SigningKeyStore } from '../../../services/product/src/store/signing-keys';
import { modelToken, pageOf } from './common';

/** In memory, with the same account scoping as the real ProductStore. */
export class FakeProductStore implements ProductStore {
  readonly Product = modelToken<ProductDoc>('Product');
  readonly docs = new Map<string, ProductDoc>();
  /** The events each write recorded along with it, in order (the real documents' outbox). */
  readonly events: DomainEvent[] = [];
  /** Set to make the product disappear between an update's read and its write. */
  vanishBeforeWrite = false;

  async insert(doc: Omit<ProductDoc, 'outbox'>, events: DomainEvent[]): Promise<void> {
    this.docs.set(doc._id, structuredClone(doc));
    this.events.push(...events);
  }

  async find(accountId: string, id: string): Promise<ProductDoc | null> {
    const d = this.docs.get(id);
    return d && d.account_id === accountId ? structuredClone(d) : null;
  }

  async update(
    accountId: string,
    id: string,
    changes: Partial<Pick<ProductDoc, 'name' | 'description' | 'policy' | 'price'>>,
    event: (after: ProductDoc) => DomainEvent,
  ): Promise<ProductDoc | null> {
    const current = await this.find(accountId, id);
    if (!current || this.vanishBeforeWrite) return null;
    const after = { ...current, ...changes };
    this.docs.set(id, structuredClone(after));
    this.events.push(event(after));
    return after;
  }

  async changeState(
    current: Pick<ProductDoc, '_id' | 'account_id' | 'archived_at'>,
    changes: Pick<ProductDoc, 'archived_at'>,
    events: DomainEvent[],
  ): Promise<boolean> {
    const found = await this.find(current.account_id, current._id);
    if (!found || this.vanishBeforeWrite) return false;
    if ((found.archived_at?.getTime() ?? null) !== (current.archived_at?.getTime() ?? null)) return false;
    this.docs.set(current._id, structuredClone({ ...found, ...changes }));
    this.events.push(...events);
    return true;
  }

  async remove(accountId: string, id: string): Promise<boolean> {
    const found = await this.find(accountId, id);
    return !!found && this.docs.delete(id);
  }

  async hasAtLeast(accountId: string, n: number): Promise<boolean> {
    return [...this.docs.values()].filter((d) => d.account_id === accountId).length >= n;
  }

  async list(accountId: string, page: PageRequest | undefined) {
    return pageOf(
      [...this.docs.values()].filter((d) => d.account_id === accountId),
      page,
    );
  }
}

export class FakeSigningKeyStore implements SigningKeyStore {
  readonly SigningKey = modelToken<SigningKeyDoc>('SigningKey');
  readonly docs: SigningKeyDoc[] = [];

  async list(productId: string): Promise<SigningKeyDoc[]> {
    return this.docs.filter((k) => k.product_id === productId).sort((a, b) => (a._id < b._id ? 1 : -1));
  }

  async insert(doc: SigningKeyDoc): Promise<void> {
    this.docs.push(doc);
  }

  async removeOf(productId: string): Promise<void> {
    this.docs.splice(0, this.docs.length, ...this.docs.filter((k) => k.product_id !== productId));
  }
}
