import type { Router } from 'express';
import type { License } from '@licensing/proto';
import { principalOf } from '../auth';
import type { Clients } from '../clients';
import { checkId, idempotencyKey, pageShape, readBody, readQuery, toPage } from '../validation';
import { route } from './route';

/** REST shape of a licence. */
export const licenseJson = (l: License) => ({
  id: l.id,
  key: l.key,
  product_id: l.productId,
  customer_email: l.customerEmail,
  status: l.status,
  expires_at: l.expiresAt || null,
  created_at: l.createdAt,
});

const KEY_MAX = 64;

export function licenseRoutes(router: Router, clients: Clients): void {
  route(router, '/licenses', {
    get: async (req, res) => {
      const query = readQuery(req, { ...pageShape, product_id: { max: 64 }, customer_email: { max: 254 } });
      const page = toPage(query, 'lic');
      const productId = query.product_id ? checkId('product_id', 'prod', query.product_id) : '';
      const out = await clients.licenses.listLicenses({ accountId: principalOf(res).accountId, page, productId, customerEmail: query.customer_email ?? '' }, { requestId: res.locals.requestId });
      res.json({ data: out.data.map(licenseJson), has_more: out.page!.hasMore, next_cursor: out.page!.nextCursor || null });
    },
    post: async (req, res) => {
      const body = readBody(req, { product_id: { required: true, max: 64 }, customer_email: { required: true, max: 254 } });
      const license = await clients.licenses.createLicense(
        { accountId: principalOf(res).accountId, productId: body.product_id!, customerEmail: body.customer_email!, idempotencyKey: idempotencyKey(req) },
        { requestId: res.locals.requestId },
      );
      res.status(201).location(`/api/v1/licenses/${license.key}`).json({ success: true, license_key: license.key, license: licenseJson(license) });
    },
  });

  // Registered before /licenses/:key so "validate" is not taken for a key.
  route(router, '/licenses/validate', {
    get: async (req, res) => {
      const { license_key } = readQuery(req, { license_key: { required: true, max: KEY_MAX } });
      const out = await clients.licenses.validateLicense({ accountId: principalOf(res).accountId, key: license_key!, productId: '' }, { requestId: res.locals.requestId });
      const l = out.license;
      res.json({
        valid: out.valid,
        code: out.code,
        detail: out.detail,
        product_id: l?.productId ?? null,
        customer_email: l?.customerEmail ?? null,
        status: l?.status ?? null,
        expires_at: l?.expiresAt || null,
      });
    },
  });

  route(router, '/keys/validate', {
    post: async (req, res) => {
      const body = readBody(req, { key: { required: true, max: KEY_MAX }, product_id: { max: 64 } });
      const productId = body.product_id ? checkId('product_id', 'prod', body.product_id) : '';
      const out = await clients.licenses.validateLicense({ accountId: principalOf(res).accountId, key: body.key!, productId }, { requestId: res.locals.requestId });
      res.json({ valid: out.valid, code: out.code, detail: out.detail, license: out.license ? licenseJson(out.license) : null });
    },
  });

  route(router, '/licenses/:key', {
    get: async (req, res) => {
      const license = await clients.licenses.getLicense({ accountId: principalOf(res).accountId, key: String(req.params.key).slice(0, KEY_MAX + 1) }, { requestId: res.locals.requestId });
      res.json(licenseJson(license));
    },
  });
}
