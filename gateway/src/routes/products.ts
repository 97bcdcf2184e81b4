import type { Router } from 'express';
import type { LicensePolicy, Product, SigningKey } from '@licensing/proto';
import { principalOf } from '../auth';
import type { LicenseValidator } from '../license-validator';
import type { Clients } from '../clients';
import { checkId, pageShape, readBody, readQuery, toPage, type Shape } from '../validation';
import { route } from './route';

/** REST shape of a licence policy (null = no limit). */
export const policyJson = (p: LicensePolicy | undefined) => ({
  duration_days: p?.durationDays ?? null,
  max_activations: p?.maxActivations ?? null,
  grace_days: p?.graceDays ?? 0,
  require_activation: p?.requireActivation ?? false,
  validate_keys_see_email: p?.validateKeysSeeEmail ?? false,
  refund_action: p?.refundAction || 'revoke',
});

/** REST shape of a product. */
export const productJson = (p: Product) => ({
  id: p.id,
  name: p.name,
  description: p.description || null,
  policy: policyJson(p.policy),
  price: p.price ? { amount: p.price.amount, currency: p.price.currency } : null,
  created_at: p.createdAt,
});

const priceShape = {
  amount: { kind: 'int', required: true, min: -2_147_483_648, max: 2_147_483_647 },
  currency: { required: true, max: 3 },
} satisfies Shape;

// Ranges are checked again by the product service; here only the JSON shape.
const policyShape = {
  duration_days: { kind: 'int', min: -2_147_483_648, max: 2_147_483_647, nullable: true },
  max_activations: { kind: 'int', min: -2_147_483_648, max: 2_147_483_647, nullable: true },
  grace_days: { kind: 'int', min: -2_147_483_648, max: 2_147_483_647 },
  require_activation: { kind: 'bool' },
  validate_keys_see_email: { kind: 'bool' },
  refund_action: { max: 20 },
} satisfies Shape;

/** A policy object as sent; omitted fields take their defaults (perpetual, unlimited, no grace, false). */
function toPolicy(p: Record<string, unknown> | undefined): LicensePolicy | undefined {
  if (!p) return undefined;
  return {
    durationDays: (p.duration_days as number | null | undefined) ?? undefined,
    maxActivations: (p.max_activations as number | null | undefined) ?? undefined,
    graceDays: (p.grace_days as number | undefined) ?? 0,
    requireActivation: (p.require_activation as boolean | undefined) ?? false,
    validateKeysSeeEmail: (p.validate_keys_see_email as boolean | undefined) ?? false,
    refundAction: (p.refund_action as string | undefined) ?? '',
  };
}

export function productRoutes(
  router: Router,
  clients: Clients,
  validator?: Pick<LicenseValidator, 'productChanged'>,
): void {
  route(router, '/products', {
    get: async (req, res) => {
      const page = toPage(readQuery(req, pageShape), 'prod');
      const out = await clients.products.listProducts({ accountId: principalOf(res).accountId, page });
      res.json({
        data: out.data.map(productJson),
        has_more: out.page!.hasMore,
        next_cursor: out.page!.nextCursor || null,
      });
    },
    post: async (req, res) => {
      const body = readBody(req, {
        name: { required: true, max: 200 },
        description: { max: 2000 },
        policy: { kind: 'object', shape: policyShape },
        price: { kind: 'object', shape: priceShape },
      });
      const product = await clients.products.createProduct({
        accountId: principalOf(res).accountId,
        name: body.name!,
        description: body.description ?? '',
        policy: toPolicy(body.policy ?? undefined),
        price: (body.price as { amount: number; currency: string } | undefined) ?? undefined,
      });
      res.status(201).location(`/api/v1/products/${product.id}`).json(productJson(product));
    },
  });

  route(router, '/products/:id', {
    get: async (req, res) => {
      const id = checkId('id', 'prod', String(req.params.id));
      const product = await clients.products.getProduct({ accountId: principalOf(res).accountId, id });
      res.json(productJson(product));
    },
    patch: async (req, res) => {
      const id = checkId('id', 'prod', String(req.params.id));
      const body = readBody(req, {
        name: { max: 200 },
        description: { max: 2000 },
        policy: { kind: 'object', shape: policyShape },
        price: { kind: 'object', shape: priceShape, nullable: true },
      });
      const product = await clients.products.updateProduct({
        accountId: principalOf(res).accountId,
        id,
        name: body.name,
        description: body.description,
        policy: toPolicy(body.policy ?? undefined),
        price: (body.price as { amount: number; currency: string } | null | undefined) ?? undefined,
        removePrice: body.price === null,
      });
      validator?.productChanged(principalOf(res), id);
      res.json(productJson(product));
    },
  });

  const signingKeyJson = (k: SigningKey) => ({
    kid: k.kid,
    algorithm: k.algorithm,
    public_key_pem: k.publicKeyPem,
    current: k.current,
    created_at: k.createdAt,
  });

  route(router, '/products/:id/signing-keys', {
    get: async (req, res) => {
      const id = checkId('id', 'prod', String(req.params.id));
      const out = await clients.products.listSigningKeys({ accountId: principalOf(res).accountId, id });
      res.json({ data: out.data.map(signingKeyJson) });
    },
  });

  route(router, '/products/:id/signing-keys/rotate', {
    post: async (req, res) => {
      const id = checkId('id', 'prod', String(req.params.id));
      readBody(req, {});
      const key = await clients.products.rotateSigningKey({ accountId: principalOf(res).accountId, id });
      res.status(201).json(signingKeyJson(key));
    },
  });
}
