import type { RequestHandler, Router } from 'express';
import type { LicenseBatch } from '@licensing/proto';
import { principalOf } from '../auth/principal';
import type { Clients } from '../backends/clients';
import type { LicenseValidator } from '../license-validation/validator';
import { KEY_MAX, licenseBatchCreate, licenseReroll } from '../request-shapes/operations';
import { idempotencyKey } from '../request-shapes/shapes';
import { licenseJson } from './licenses';
import { registerRouteTable, withBody, type RouteRow } from './route';

/** The largest body POST /licenses/batch takes (1,000 items with their metadata); other routes keep BODY_LIMIT_BYTES. */
export const BATCH_BODY_LIMIT_BYTES = 2 * 1024 * 1024;

/** REST shape of a licence batch job. */
export const licenseBatchJson = (b: LicenseBatch) => ({
  id: b.id,
  object: 'license_batch' as const,
  status: b.status,
  product_id: b.product_id,
  total: b.total,
  issued: b.issued,
  failed: b.failed,
  waiting: b.total - b.issued - b.failed,
  results: b.results.map((r) => ({
    index: r.index,
    status: r.status,
    license_id: r.license_id,
    license_key: r.key || null,
    error: r.error || null,
  })),
  created_at: b.created_at,
  completed_at: b.completed_at || null,
});

interface BatchDeps {
  clients: Clients;
  validator: LicenseValidator;
}

/** POST /licenses/batch: bulk issuance, a job in the licence service (202, then read with GET). */
function createBatch({ clients }: BatchDeps): RequestHandler {
  return withBody(licenseBatchCreate, async (req, res, body) => {
    const batch = await clients.licenses.createLicenseBatch({
      account_id: principalOf(res).accountId,
      product_id: body.product_id!,
      licenses: body.licenses!.map((l) => ({
        customer_email: l.customer_email as string,
        metadata: (l.metadata as Record<string, string> | undefined) ?? {},
        entitlements: (l.entitlements as string[] | undefined) ?? [],
        send_email: (l.send_email as boolean | undefined) ?? false,
      })),
      idempotency_key: idempotencyKey(req),
    });
    res.status(202).location(`/api/v1/licenses/batch/${batch.id}`).json(licenseBatchJson(batch));
  });
}

/** GET /licenses/batch/:id: a batch's progress and results. */
function getBatch({ clients }: BatchDeps): RequestHandler {
  return async (req, res) => {
    const batch = await clients.licenses.getLicenseBatch({
      account_id: principalOf(res).accountId,
      id: String(req.params.id).slice(0, 64),
    });
    res.json(licenseBatchJson(batch));
  };
}

/** POST /licenses/:key/reroll: the licence gets a new key (the old one lives on for the grace hours). */
function rerollLicense({ clients, validator }: BatchDeps): RequestHandler {
  return withBody(licenseReroll, async (req, res, body) => {
    const p = principalOf(res);
    const oldKey = String(req.params.key).slice(0, KEY_MAX + 1);
    const license = await clients.licenses.rerollLicense({
      account_id: p.accountId,
      key: oldKey,
      grace_hours: body.grace_hours ?? 0,
      // Asked on license.rerolled, in the write that gives the licence its new key (the notification
      // service queues it). A retried reroll (same old key) answers the same key and writes no second event.
      send_email: body.send_email === true,
    });
    // Read your writes: this gateway's next answers for both keys come from after the reroll.
    validator.changed(p, oldKey);
    validator.changed(p, license.key);
    res.json(licenseJson(license));
  });
}

/**
 * Bulk issuance and key reroll. Registered before /licenses/:key, so "batch" is never taken for a key.
 */
export const licenseBatchRouteTable: readonly RouteRow<BatchDeps>[] = [
  { method: 'post', path: '/licenses/batch', role: 'developer', handler: createBatch },
  { method: 'get', path: '/licenses/batch/:id', role: 'read_only', handler: getBatch },
  { method: 'post', path: '/licenses/:key/reroll', role: 'support', handler: rerollLicense },
];

export function licenseBatchRoutes(router: Router, clients: Clients, validator: LicenseValidator): void {
  registerRouteTable(router, licenseBatchRouteTable, { clients, validator });
}
