import { AppError, newId, type Handlers, type ServiceContext } from '@licensing/runtime';
import type { ProductServiceService, SigningKey } from '@licensing/proto';
import { ALGORITHM, masterKey, newSigningKey, payloadWithKid, signWith } from '../domain/signing';
import type { ProductStore } from '../store/queries';
import type { SigningKeyDoc, SigningKeyStore } from '../store/signing-keys';
import type { ProductConfig } from '../config';

type SigningHandlers = Pick<Handlers<typeof ProductServiceService>, 'listSigningKeys' | 'rotateSigningKey' | 'signPayload'>;

export function signingHandlers(ctx: ServiceContext<ProductConfig>, products: ProductStore, keys: SigningKeyStore): SigningHandlers {
  const master = masterKey(ctx.config.SIGNING_KEY_SECRET);
  const toKey = (d: SigningKeyDoc, current: boolean): SigningKey => ({ kid: d._id, productId: d.product_id, algorithm: ALGORITHM, publicKeyPem: d.public_key_pem, createdAt: d.created_at.toISOString(), current });

  async function ownProduct(accountId: string, id: string) {
    const product = await products.find(accountId, id);
    if (!product) throw AppError.notFound('product');
    return product;
  }

  async function addKey(accountId: string, productId: string): Promise<SigningKeyDoc> {
    const doc = { _id: newId('kid'), product_id: productId, account_id: accountId, ...newSigningKey(master), created_at: ctx.clock.now() };
    await keys.insert(doc);
    return doc;
  }

  /** Every product gets its first key when it is first needed. */
  async function keysOf(accountId: string, productId: string): Promise<SigningKeyDoc[]> {
    await ownProduct(accountId, productId);
    const existing = await keys.list(productId);
    return existing.length ? existing : [await addKey(accountId, productId)];
  }

  return {
    async listSigningKeys(req) {
      const all = await keysOf(req.accountId, req.id);
      return { data: all.map((k, i) => toKey(k, i === 0)) };
    },

    async rotateSigningKey(req) {
      await ownProduct(req.accountId, req.id);
      return toKey(await addKey(req.accountId, req.id), true);
    },

    async signPayload(req) {
      const [current] = await keysOf(req.accountId, req.productId);
      const payload = payloadWithKid(req.payloadJson, current._id);
      return { kid: current._id, payload, signature: signWith(current.private_key_sealed, master, payload) };
    },
  };
}
