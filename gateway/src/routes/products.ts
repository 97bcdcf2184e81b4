import type { Router } from 'express';
import {
  policyToContract,
  withPolicyDefaults,
  type LicensePolicy,
  type Policy,
  type Price,
  type Product,
  type SigningKey,
} from '@licensing/proto';
import { principalOf } from '../auth/principal';
import type { LicenseValidator } from '../license-validation/validator';
import type { Clients } from '../backends/clients';
import { checkId, pageShape, readBody, toPage } from '../request-shapes/shapes';
import { productCreate, productUpdate } from '../request-shapes/operations';
import { route, withBody, withQuery } from './route';

/** REST shape of a licence policy: every field of proto/rules/policy.ts, null = no limit. */
export const policyJson = (p: LicensePolicy | undefined): Policy => withPolicyDefaults(p);

/** REST shape of a price: interval null for a one-time price. */
export const priceJson = (p: Price) => ({
  amount: p.amount,
  currency: p.currency,
  interval: p.interval || null,
  interval_count: p.interval ? p.interval_count || 1 : null,
  trial_days: p.interval ? (p.trial_days ?? 0) : 0,
});

/** A price as sent (shape-checked): the product service checks how its fields go together. */
const toPrice = (p: Record<string, unknown> | null | undefined): Price | undefined =>
  p
    ? {
        amount: p.amount as number,
        currency: p.currency as string,
        interval: typeof p.interval === 'string' ? p.interval : undefined,
        interval_count: typeof p.interval_count === 'number' ? p.interval_count : undefined,
        trial_days: typeof p.trial_days === 'number' ? p.trial_days : undefined,
      }
    : undefined;

/** REST shape of a product. */
export const productJson = (p: Product) => ({
  id: p.id,
  name: p.name,
  description: p.description || null,
  policy: policyJson(p.policy),
  price: p.price ? priceJson(p.price) : null,
  email_on_purchase: p.email_on_purchase,
  created_at: p.created_at,
});

/** A policy object as sent (shape-checked); omitted fields take their defaults. */
const toPolicy = (p: Record<string, unknown> | undefined): LicensePolicy | undefined =>
  p ? policyToContract(withPolicyDefaults(p)) : undefined;

export function productRoutes(
  router: Router,
  clients: Clients,
  validator?: Pick<LicenseValidator, 'productChanged'>,
): void {
  route(router, '/products', {
    get: withQuery(pageShape, async (_req, res, query) => {
      const page = toPage(query, 'prod');
      const out = await clients.products.listProducts({ account_id: principalOf(res).accountId, page });
      res.json({
        data: out.data.map(productJson),
        has_more: out.page!.has_more,
        next_cursor: out.page!.next_cursor || null,
      });
    }),
    post: withBody(productCreate, async (_req, res, body) => {
      const product = await clients.products.createProduct({
        account_id: principalOf(res).accountId,
        name: body.name!,
        description: body.description ?? '',
        policy: toPolicy(body.policy ?? undefined),
        price: toPrice(body.price as Record<string, unknown> | undefined),
        email_on_purchase: body.email_on_purchase ?? undefined,
      });
      res.status(201).location(`/api/v1/products/${product.id}`).json(productJson(product));
    }),
  });

  route(router, '/products/:id', {
    get: async (req, res) => {
      const id = checkId('id', 'prod', String(req.params.id));
      const product = await clients.products.getProduct({ account_id: principalOf(res).accountId, id });
      res.json(productJson(product));
    },
    patch: withBody(productUpdate, async (req, res, body) => {
      const id = checkId('id', 'prod', String(req.params.id));
      const product = await clients.products.updateProduct({
        account_id: principalOf(res).accountId,
        id,
        name: body.name,
        description: body.description,
        policy: toPolicy(body.policy ?? undefined),
        price: toPrice(body.price as Record<string, unknown> | null | undefined),
        remove_price: body.price === null,
        email_on_purchase: body.email_on_purchase ?? undefined,
      });
      validator?.productChanged(principalOf(res), id);
      res.json(productJson(product));
    }),
  });

  const signingKeyJson = (k: SigningKey) => ({
    kid: k.kid,
    algorithm: k.algorithm,
    public_key_pem: k.public_key_pem,
    current: k.current,
    created_at: k.created_at,
  });

  route(router, '/products/:id/signing-keys', {
    get: async (req, res) => {
      const id = checkId('id', 'prod', String(req.params.id));
      const out = await clients.products.listSigningKeys({ account_id: principalOf(res).accountId, id });
      res.json({ data: out.data.map(signingKeyJson) });
    },
  });

  route(router, '/products/:id/signing-keys/rotate', {
    post: async (req, res) => {
      const id = checkId('id', 'prod', String(req.params.id));
      readBody(req, {});
      const key = await clients.products.rotateSigningKey({ account_id: principalOf(res).accountId, id });
      res.status(201).json(signingKeyJson(key));
    },
  });
}
