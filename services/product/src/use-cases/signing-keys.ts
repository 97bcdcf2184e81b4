import { newId, type Clock, type Keyring } from '@licensing/runtime';
import { newSigningKey, payloadWithKid, signWith } from '../domain/signing';
import type { ProductStore } from '../store/queries';
import type { SigningKeyDoc, SigningKeyStore } from '../store/signing-keys';
import { findProduct } from './read-products';

export interface SigningDeps {
  products: ProductStore;
  keys: SigningKeyStore;
  /** Seals the private keys at rest (SIGNING_KEY_SECRET). */
  master: Keyring;
  clock: Clock;
}

export interface SignedPayload {
  kid: string;
  payload: Buffer;
  signature: Buffer;
}

/** A product's licence-file signing keys: listed newest (current) first, rotated, used to sign. */
export class SigningKeys {
  constructor(private readonly deps: SigningDeps) {}

  private async add(accountId: string, productId: string): Promise<SigningKeyDoc> {
    const doc = {
      _id: newId('kid'),
      product_id: productId,
      account_id: accountId,
      ...newSigningKey(this.deps.master),
      created_at: this.deps.clock.now(),
    };
    await this.deps.keys.insert(doc);
    return doc;
  }

  /** Newest first, the first is current. Every product gets its first key when it is first needed. */
  async list(accountId: string, productId: string): Promise<SigningKeyDoc[]> {
    await findProduct(this.deps.products, accountId, productId);
    const existing = await this.deps.keys.list(productId);
    return existing.length ? existing : [await this.add(accountId, productId)];
  }

  /** A new current key; the older ones stay, so files they signed keep verifying. */
  async rotate(accountId: string, productId: string): Promise<SigningKeyDoc> {
    await findProduct(this.deps.products, accountId, productId);
    return this.add(accountId, productId);
  }

  /** Signs the licence service's JSON payload with the current key, the kid set in it. */
  async sign(accountId: string, productId: string, payloadJson: string): Promise<SignedPayload> {
    const [current] = await this.list(accountId, productId);
    const payload = payloadWithKid(payloadJson, current._id);
    return { kid: current._id, payload, signature: signWith(current.private_key_sealed, this.deps.master, payload) };
  }
}
