import type { RequestHandler, Router } from 'express';
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
import { checkId, pageShape, readBody, toPage, pageJson } from '../request-shapes/shapes';
import { productCreate, productUpdate } from '../request-shapes/operations';
import { registerRouteTable, withBody, withQuery, type RouteRow } from './route';

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
  // null while on sale; when archived it sells and issues nothing new (its licences keep working).
  archived_at: p.archived_at || null,
});

/** A policy object as sent (shape-checked); omitted fields take their defaults. */
const toPolicy = (p: Record<string, unknown> | undefined): LicensePolicy | undefined =>
  p ? policyToContract(withPolicyDefaults(p)) : undefined;

/** What the product handlers reach: the services, and (in the gateway) the validator that drops a changed product's cached copies. */
interface ProductDeps {
  clients: Clients;
  validator?: Pick<LicenseValidator, 'productChanged'>;
}

const signingKeyJson = (k: SigningKey) => ({
  kid: k.kid,
  algorithm: k.algorithm,
  public_key_pem: k.public_key_pem,
  current: k.current,
  created_at: k.created_at,
});

function listProducts({ clients }: ProductDeps): RequestHandler {
  return withQuery(pageShape, async (_req, res, query) => {
    const page = toPage(query, 'prod');
    const out = await clients.products.listProducts({ account_id: principalOf(res).accountId, page });
    res.json(pageJson(out.page!, out.data.map(productJson)));
  });
}

function createProduct({ clients }: ProductDeps): RequestHandler {
  return withBody(productCreate, async (_req, res, body) => {
    const product = await clients.products.createProduct({
      account_id: principalOf(res).accountId,
      name: body.name!,
      description: body.description ?? '',
      policy: toPolicy(body.policy ?? undefined),
      price: toPrice(body.price as Record<string, unknown> | undefined),
      email_on_purchase: body.email_on_purchase ?? undefined,
    });
    res.status(201).location(`/api/v1/products/${product.id}`).json(productJson(product));
  });
}

function getProduct({ clients }: ProductDeps): RequestHandler {
  return async (req, res) => {
    const id = checkId('id', 'prod', String(req.params.id));
    const product = await clients.products.getProduct({ account_id: principalOf(res).accountId, id });
    res.json(productJson(product));
  };
}

function updateProduct({ clients, validator }: ProductDeps): RequestHandler {
  return withBody(productUpdate, async (req, res, body) => {
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
  });
}

/** Archive, unarchive or delete: a call naming the product, with no body; answers the product (a deleted one as it was). */
const productAction =
  (call: 'archiveProduct' | 'unarchiveProduct' | 'deleteProduct') =>
  ({ clients, validator }: ProductDeps): RequestHandler =>
  async (req, res) => {
    const id = checkId('id', 'prod', String(req.params.id));
    if (call !== 'deleteProduct') readBody(req, {});
    const product = await clients.products[call]({ account_id: principalOf(res).accountId, id });
    // This gateway's cached answers of the product's licences are read afresh (as after an update).
    validator?.productChanged(principalOf(res), id);
    res.json(productJson(product));
  };

function listSigningKeys({ clients }: ProductDeps): RequestHandler {
  return async (req, res) => {
    const id = checkId('id', 'prod', String(req.params.id));
    const out = await clients.products.listSigningKeys({ account_id: principalOf(res).accountId, id });
    res.json({ data: out.data.map(signingKeyJson) });
  };
}

function rotateSigningKey({ clients }: ProductDeps): RequestHandler {
  return async (req, res) => {
    const id = checkId('id', 'prod', String(req.params.id));
    readBody(req, {});
    const key = await clients.products.rotateSigningKey({ account_id: principalOf(res).accountId, id });
    res.status(201).json(signingKeyJson(key));
  };
}

/** Products and their signing keys. */
export const productRouteTable: readonly RouteRow<ProductDeps>[] = [
  { method: 'get', path: '/products', role: 'read_only', handler: listProducts },
  { method: 'post', path: '/products', role: 'developer', handler: createProduct },
  { method: 'get', path: '/products/:id', role: 'read_only', handler: getProduct },
  { method: 'patch', path: '/products/:id', role: 'developer', handler: updateProduct },
  { method: 'delete', path: '/products/:id', role: 'developer', handler: productAction('deleteProduct') },
  { method: 'post', path: '/products/:id/archive', role: 'developer', handler: productAction('archiveProduct') },
  { method: 'post', path: '/products/:id/unarchive', role: 'developer', handler: productAction('unarchiveProduct') },
  { method: 'get', path: '/products/:id/signing-keys', role: 'read_only', handler: listSigningKeys },
  { method: 'post', path: '/products/:id/signing-keys/rotate', role: 'developer', handler: rotateSigningKey },
];

export function productRoutes(
  router: Router,
  clients: Clients,
  validator?: Pick<LicenseValidator, 'productChanged'>,
): void {
  registerRouteTable(router, productRouteTable, { clients, validator });
}
