import type { Router } from 'express';
import type { Product } from '@licensing/proto';
import { principalOf } from '../auth';
import type { Clients } from '../clients';
import { checkId, pageShape, readBody, readQuery, toPage } from '../validation';
import { route } from './route';

/** REST shape of a product. */
export const productJson = (p: Product) => ({
  id: p.id,
  name: p.name,
  description: p.description || null,
  created_at: p.createdAt,
});

export function productRoutes(router: Router, clients: Clients): void {
  route(router, '/products', {
    get: async (req, res) => {
      const page = toPage(readQuery(req, pageShape), 'prod');
      const out = await clients.products.listProducts({ accountId: principalOf(res).accountId, page }, { requestId: res.locals.requestId });
      res.json({ data: out.data.map(productJson), has_more: out.page!.hasMore, next_cursor: out.page!.nextCursor || null });
    },
    post: async (req, res) => {
      const body = readBody(req, { name: { required: true, max: 200 }, description: { max: 2000 } });
      const product = await clients.products.createProduct({ accountId: principalOf(res).accountId, name: body.name!, description: body.description ?? '' }, { requestId: res.locals.requestId });
      res.status(201).location(`/api/v1/products/${product.id}`).json(productJson(product));
    },
  });

  route(router, '/products/:id', {
    get: async (req, res) => {
      const id = checkId('id', 'prod', String(req.params.id));
      const product = await clients.products.getProduct({ accountId: principalOf(res).accountId, id }, { requestId: res.locals.requestId });
      res.json(productJson(product));
    },
  });
}
