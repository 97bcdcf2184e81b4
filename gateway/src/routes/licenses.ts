import type { Router } from 'express';
import { AppError } from '@licensing/runtime';
import type { Activation, License } from '@licensing/proto';
import { principalOf } from '../auth';
import type { Clients } from '../clients';
import type { LicenseValidator, ValidationAnswer } from '../license-validator';
import { checkId, idempotencyKey, pageShape, readBody, readQuery, toPage } from '../validation';
import { policyJson } from './products';
import { route } from './route';

/** REST shape of a licence. customer_email is null for validate keys unless the product allows them to see it. */
export const licenseJson = (l: License) => ({
  id: l.id,
  key: l.key,
  product_id: l.productId,
  customer_email: l.customerEmail || null,
  status: l.status,
  expires_at: l.expiresAt || null,
  policy: policyJson(l.policy),
  activations: l.activations,
  metadata: l.metadata,
  created_at: l.createdAt,
  last_validated_at: l.lastValidatedAt || null,
});

export const activationJson = (a: Activation) => ({
  id: a.id,
  fingerprint: a.fingerprint,
  name: a.name || null,
  created_at: a.createdAt,
});

/** REST shape of GET /licenses/validate (also written by the gateway's fast path). */
export const validationJson = (out: ValidationAnswer) => ({
  valid: out.valid,
  code: out.code,
  detail: out.detail,
  product_id: out.license?.productId ?? null,
  customer_email: out.license?.customerEmail || null,
  status: out.license?.status ?? null,
  expires_at: out.license?.expiresAt || null,
  next_action: out.nextAction,
  cache_until: out.cacheUntil,
});

const STATUSES = ['active', 'suspended', 'revoked', 'expired'];

export const KEY_MAX = 64;

export function licenseRoutes(router: Router, clients: Clients, validator: LicenseValidator): void {
  route(router, '/licenses', {
    get: async (req, res) => {
      const query = readQuery(req, {
        ...pageShape,
        product_id: { max: 64 },
        customer_email: { max: 254 },
        status: { max: 20 },
      });
      const page = toPage(query, 'lic');
      const productId = query.product_id ? checkId('product_id', 'prod', query.product_id) : '';
      if (query.status && !STATUSES.includes(query.status))
        throw AppError.invalid('status', `status must be one of ${STATUSES.join(', ')}`);
      const out = await clients.licenses.listLicenses({
        accountId: principalOf(res).accountId,
        page,
        productId,
        customerEmail: query.customer_email ?? '',
        status: query.status ?? '',
      });
      res.json({
        data: out.data.map(licenseJson),
        has_more: out.page!.hasMore,
        next_cursor: out.page!.nextCursor || null,
      });
    },
    post: async (req, res) => {
      const body = readBody(req, {
        product_id: { required: true, max: 64 },
        customer_email: { required: true, max: 254 },
      });
      const license = await clients.licenses.createLicense({
        accountId: principalOf(res).accountId,
        productId: body.product_id!,
        customerEmail: body.customer_email!,
        idempotencyKey: idempotencyKey(req),
      });
      validator.changed(principalOf(res), license.key); // a "not found" this gateway remembers for the key is wrong now
      res
        .status(201)
        .location(`/api/v1/licenses/${license.key}`)
        .json({ success: true, license_key: license.key, license: licenseJson(license) });
    },
  });

  // Registered before /licenses/:key so "validate" is not taken for a key.
  route(router, '/licenses/validate', {
    get: async (req, res) => {
      const { license_key, fingerprint } = readQuery(req, {
        license_key: { required: true, max: KEY_MAX },
        fingerprint: { max: 200 },
      });
      const out = await validator.validate(principalOf(res), {
        key: license_key!,
        productId: '',
        fingerprint: fingerprint ?? '',
      });
      res.json(validationJson(out));
    },
  });

  route(router, '/keys/validate', {
    post: async (req, res) => {
      const body = readBody(req, {
        key: { required: true, max: KEY_MAX },
        product_id: { max: 64 },
        fingerprint: { max: 200 },
      });
      const productId = body.product_id ? checkId('product_id', 'prod', body.product_id) : '';
      const out = await validator.validate(principalOf(res), {
        key: body.key!,
        productId,
        fingerprint: body.fingerprint ?? '',
      });
      res.json({
        valid: out.valid,
        code: out.code,
        detail: out.detail,
        status: out.license?.status ?? null,
        expires_at: out.license?.expiresAt || null,
        next_action: out.nextAction,
        cache_until: out.cacheUntil,
        license: out.license ? licenseJson(out.license) : null,
      });
    },
  });

  const keyOf = (req: { params: Record<string, unknown> }) => String(req.params.key).slice(0, KEY_MAX + 1);

  route(router, '/licenses/:key', {
    get: async (req, res) => {
      const license = await clients.licenses.getLicense({ accountId: principalOf(res).accountId, key: keyOf(req) });
      res.json(licenseJson(license));
    },
    patch: async (req, res) => {
      // An empty metadata value removes that entry.
      const body = readBody(req, { customer_email: { max: 254 }, metadata: { kind: 'map', maxEntries: 50 } });
      const license = await clients.licenses.updateLicense({
        accountId: principalOf(res).accountId,
        key: keyOf(req),
        customerEmail: body.customer_email,
        metadata: body.metadata ?? {},
      });
      validator.changed(principalOf(res), license.key);
      res.json(licenseJson(license));
    },
  });

  for (const action of ['suspend', 'reinstate', 'revoke', 'renew']) {
    route(router, `/licenses/:key/${action}`, {
      post: async (req, res) => {
        readBody(req, {});
        const license = await clients.licenses.transitionLicense({
          accountId: principalOf(res).accountId,
          key: keyOf(req),
          action,
        });
        // Read your writes: this gateway's next validation already sees the change (the others within a second, by event).
        validator.changed(principalOf(res), license.key);
        res.json(licenseJson(license));
      },
    });
  }

  route(router, '/licenses/:key/activations', {
    get: async (req, res) => {
      const page = toPage(readQuery(req, pageShape), 'act');
      const out = await clients.licenses.listActivations({
        accountId: principalOf(res).accountId,
        key: keyOf(req),
        page,
      });
      res.json({
        data: out.data.map(activationJson),
        has_more: out.page!.hasMore,
        next_cursor: out.page!.nextCursor || null,
      });
    },
    post: async (req, res) => {
      const body = readBody(req, { fingerprint: { required: true, max: 200 }, name: { max: 100 } });
      const out = await clients.licenses.activate({
        accountId: principalOf(res).accountId,
        key: keyOf(req),
        fingerprint: body.fingerprint!,
        name: body.name ?? '',
      });
      validator.changed(principalOf(res), keyOf(req));
      res.status(out.created ? 201 : 200).json(activationJson(out.activation!));
    },
  });

  route(router, '/licenses/:key/file', {
    post: async (req, res) => {
      const body = readBody(req, { fingerprint: { max: 200 }, ttl_days: { kind: 'int', min: 1, max: 365 } });
      const file = await clients.licenses.issueLicenseFile({
        accountId: principalOf(res).accountId,
        key: keyOf(req),
        fingerprint: body.fingerprint ?? '',
        ttlDays: body.ttl_days ?? 0,
      });
      res
        .status(201)
        .json({ kid: file.kid, algorithm: file.algorithm, payload: file.payload, signature: file.signature });
    },
  });

  route(router, '/licenses/:key/activations/:id', {
    delete: async (req, res) => {
      await clients.licenses.deactivate({
        accountId: principalOf(res).accountId,
        key: keyOf(req),
        activationId: String(req.params.id).slice(0, 64),
      });
      validator.changed(principalOf(res), keyOf(req));
      res.status(204).end();
    },
  });
}
