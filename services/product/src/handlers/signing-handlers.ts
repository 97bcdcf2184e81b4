import type { Handlers } from '@licensing/runtime';
import type { ProductServiceService, SigningKey } from '@licensing/proto';
import { ALGORITHM } from '../domain/signing';
import type { SigningKeyDoc } from '../store/signing-keys';
import type { SigningKeys } from '../use-cases/signing-keys';

type SigningHandlers = Pick<
  Handlers<typeof ProductServiceService>,
  'listSigningKeys' | 'rotateSigningKey' | 'signPayload'
>;

const toKey = (d: SigningKeyDoc, current: boolean): SigningKey => ({
  kid: d._id,
  product_id: d.product_id,
  algorithm: ALGORITHM,
  public_key_pem: d.public_key_pem,
  created_at: d.created_at.toISOString(),
  current,
});

export function signingHandlers(keys: SigningKeys): SigningHandlers {
  return {
    async listSigningKeys(req) {
      const all = await keys.list(req.account_id, req.id);
      return { data: all.map((k, i) => toKey(k, i === 0)) };
    },
    rotateSigningKey: async (req) => toKey(await keys.rotate(req.account_id, req.id), true),
    signPayload: (req) => keys.sign(req.account_id, req.product_id, req.payload_json),
  };
}
