import { serviceSchema, type ConfigOf } from '@licensing/runtime';

export const productSchema = serviceSchema('product', 50052);

export type ProductConfig = ConfigOf<typeof productSchema>;
