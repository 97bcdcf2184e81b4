import { AppError, checkEmail, idempotent, isId, newId, type Handlers, type ServiceContext, type CallOptions } from '@licensing/runtime';
import type { License, LicenseServiceService, Product, GetProductRequest } from '@licensing/proto';

import { generateLicenseKey, parseLicenseKey } from '../domain/license-key';
import { judge } from '../domain/validation';
import { HOUR_MS, last24Hours } from '../domain/stats';
import type { ValidationCounter } from '../store/stats';
import { licenseCreated } from '../events/license-events';
import type { LicenseDoc } from '../store/models';
import type { LicenseStore } from '../store/queries';
import type { LicenseConfig } from '../config';

export interface ProductLookup {
  getProduct(req: GetProductRequest, opts?: CallOptions): Promise<Product>;
}

const toLicense = (doc: Omit<LicenseDoc, 'outbox'>): License => ({
  id: doc._id,
  accountId: doc.account_id,
  productId: doc.product_id,
  key: doc.key,
  customerEmail: doc.customer_email,
  status: doc.status,
  expiresAt: doc.expires_at ? doc.expires_at.toISOString() : '',
  createdAt: doc.created_at.toISOString(),
});

const isDuplicateKey = (err: unknown) => (err as { code?: number })?.code === 11000;

export function licenseHandlers(ctx: ServiceContext<LicenseConfig>, store: LicenseStore, products: ProductLookup, counter: ValidationCounter): Handlers<typeof LicenseServiceService> {
  async function issue(accountId: string, productId: string, customerEmail: string, requestId: string): Promise<License> {
    // The product must exist in the caller's account; another account's product is not found.
    await products.getProduct({ accountId, id: productId }, { requestId });
    for (let attempt = 0; ; attempt++) {
      const doc = { _id: newId('lic'), account_id: accountId, product_id: productId, key: generateLicenseKey(), customer_email: customerEmail, customer_email_lc: customerEmail.toLowerCase(), status: 'active', expires_at: null, created_at: ctx.clock.now() };
      try {
        await store.insert(doc, [licenseCreated(doc)]);
      } catch (err) {
        // 140 random bits: a collision means a broken RNG, but never hand out a duplicate.
        if (isDuplicateKey(err) && attempt < 2) continue;
        throw err;
      }
      ctx.outbox.flush(store.models.License, doc._id);
      return toLicense(doc);
    }
  }

  return {
    async createLicense(req, call) {
      if (!isId('prod', req.productId)) throw AppError.invalid('product_id', 'product_id must be a product id (prod_…)');
      const email = checkEmail('customer_email', req.customerEmail);
      const run = () => issue(req.accountId, req.productId, email, call.requestId);
      if (!req.idempotencyKey) return run();
      const request = { product_id: req.productId, customer_email: email };
      return idempotent(store.models.Idempotency, `${req.accountId}:create_license`, req.idempotencyKey, request, run, ctx.clock.now());
    },

    async getLicense(req) {
      const parsed = parseLicenseKey(req.key);
      const doc = parsed.ok ? await store.findInAccount(req.accountId, parsed.key) : null;
      if (!doc) throw AppError.notFound('licence');
      return toLicense(doc);
    },

    async listLicenses(req) {
      if (req.productId && !isId('prod', req.productId)) throw AppError.invalid('product_id', 'product_id must be a product id (prod_…)');
      if (req.customerEmail.length > 254) throw AppError.invalid('customer_email', 'customer_email must be at most 254 characters');
      const { items, page } = await store.list(req.accountId, { productId: req.productId, customerEmail: req.customerEmail }, req.page);
      return { data: items.map(toLicense), page };
    },

    async getStats(req) {
      const now = ctx.clock.now();
      const [total, buckets] = await Promise.all([store.count(req.accountId), counter.since(req.accountId, new Date(now.getTime() - 24 * HOUR_MS))]);
      return { licensesTotal: total, validationsByHour: last24Hours(buckets, now).map((b) => ({ hour: b.hour.toISOString(), validations: b.validations, valid: b.valid })) };
    },

    async validateLicense(req) {
      const parsed = parseLicenseKey(req.key);
      const doc = parsed.ok ? await store.findByKey(parsed.key) : null;
      const now = ctx.clock.now();
      const verdict = judge(parsed, doc, req, now);
      counter.record(req.accountId, verdict.valid, now);
      return { valid: verdict.valid, code: verdict.code, detail: verdict.detail, license: verdict.visible && doc ? toLicense(doc) : undefined };
    },
  };
}
