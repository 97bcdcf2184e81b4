import { serviceSchema, str, type ConfigOf } from '@licensing/runtime';

export const productSchema = {
  ...serviceSchema('product', 15052),
  SIGNING_KEY_SECRET: str('32 random bytes, base64: encrypts the licence-file signing keys at rest', { secret: true }),
};

export type ProductConfig = ConfigOf<typeof productSchema>;
