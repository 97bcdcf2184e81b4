import { serviceSchema, str, type ConfigOf } from '@licensing/runtime';

export const productSchema = {
  ...serviceSchema('product', 15052),
  LICENSE_GRPC_ADDR: str(
    'Licence service address (host:port), asked whether a product has licences before it is deleted',
    {
      default: '127.0.0.1:15053',
    },
  ),
  SIGNING_KEY_SECRET: str(
    '32 random bytes, base64: encrypts the licence-file signing keys at rest. While it is rotated, several as id:<base64> entries (comma-separated; a bare one is the id "legacy"): the first seals, every one opens (docs/operations.md, "Rotating secrets")',
    { secret: true },
  ),
};

export type ProductConfig = ConfigOf<typeof productSchema>;
