import { Schema, type Connection, type Model } from 'mongoose';

export interface SigningKeyDoc {
  /** kid */
  _id: string;
  product_id: string;
  account_id: string;
  public_key_pem: string;
  private_key_sealed: string;
  created_at: Date;
}

export function signingKeyModel(conn: Connection): Model<SigningKeyDoc> {
  const schema = new Schema<SigningKeyDoc>(
    {
      _id: String,
      product_id: { type: String, required: true },
      account_id: { type: String, required: true },
      public_key_pem: { type: String, required: true },
      private_key_sealed: { type: String, required: true },
      created_at: { type: Date, required: true },
    },
    { versionKey: false, collection: 'signing_keys' },
  );
  schema.index({ product_id: 1, _id: -1 });
  return conn.model<SigningKeyDoc>('SigningKey', schema);
}

export class SigningKeyStore {
  constructor(readonly SigningKey: Model<SigningKeyDoc>) {}

  /** Newest first; the first is the current key (ids are time-ordered). */
  list(productId: string): Promise<SigningKeyDoc[]> {
    return this.SigningKey.find({ product_id: productId }).sort({ _id: -1 }).lean<SigningKeyDoc[]>().exec();
  }

  async insert(doc: SigningKeyDoc): Promise<void> {
    await this.SigningKey.create(doc);
  }

  /** Removes every key of a deleted product (no licence of it is left for a file to be signed for). */
  async removeOf(productId: string): Promise<void> {
    await this.SigningKey.deleteMany({ product_id: productId });
  }
}
