import {
  AppError,
  checkEmail,
  idempotent,
  isId,
  type CallOptions,
  type Handlers,
  type ServiceContext,
} from '@licensing/runtime';
import {
  graceEndsAt,
  parseLicenseKey,
  statuses,
  type GetProductRequest,
  type License,
  type LicenseServiceService,
  type Product,
  type Status,
} from '@licensing/proto';
import { actions, transition, type Action } from '../domain/lifecycle';
import { newLicense } from '../domain/new-license';
import { expiryBucket } from '../domain/expiry';
import { mergeMetadata } from '../domain/metadata';
import { DAY_MS, last24Hours, last30Days } from '../domain/stats';
import { licenseCreated, licenseEvent } from '../events/license-events';
import type { LicenseDoc } from '../store/models';
import type { LicenseStore } from '../store/queries';
import type { ValidationCounter } from '../store/stats';
import type { LicenseConfig } from '../config';
import { fromPolicy, toLicense } from './mapping';

export interface ProductLookup {
  getProduct(req: GetProductRequest, opts?: CallOptions): Promise<Product>;
}

type LicenseHandlers = Pick<
  Handlers<typeof LicenseServiceService>,
  'createLicense' | 'getLicense' | 'listLicenses' | 'updateLicense' | 'transitionLicense' | 'getStats'
>;

const isDuplicateKey = (err: unknown) => (err as { code?: number })?.code === 11000;

const pastTense: Record<Action, 'license.suspended' | 'license.reinstated' | 'license.revoked' | 'license.renewed'> = {
  suspend: 'license.suspended',
  reinstate: 'license.reinstated',
  revoke: 'license.revoked',
  renew: 'license.renewed',
};

/** The caller's licence by key (typed loosely), or 404 for a typo, an unknown key or another account's. */
export async function ownLicense(store: LicenseStore, accountId: string, key: string): Promise<LicenseDoc> {
  const parsed = parseLicenseKey(key);
  const doc = parsed.ok ? await store.findInAccount(accountId, parsed.key) : null;
  if (!doc) throw AppError.notFound('licence');
  return doc;
}

export function licenseHandlers(
  ctx: ServiceContext<LicenseConfig>,
  store: LicenseStore,
  products: ProductLookup,
  counter: ValidationCounter,
): LicenseHandlers {
  async function issue(accountId: string, productId: string, customerEmail: string): Promise<License> {
    // The product must exist in the caller's account; another account's product is not found.
    const product = await products.getProduct({ accountId, id: productId });
    const policy = fromPolicy(product.policy);
    for (let attempt = 0; ; attempt++) {
      const now = ctx.clock.now();
      const doc = newLicense(accountId, productId, customerEmail, policy, now);
      try {
        await store.insert(doc, [licenseCreated(doc)]);
      } catch (err) {
        // 140 random bits: a collision means a broken RNG, but never hand out a duplicate.
        if (isDuplicateKey(err) && attempt < 2) continue;
        throw err;
      }
      ctx.outbox.flush(store.models.License, doc._id);
      return toLicense(doc, now);
    }
  }

  /** Applies a change computed from the current document; retries if another writer got there first. */
  async function change(
    accountId: string,
    key: string,
    apply: (
      doc: LicenseDoc,
      now: Date,
    ) => Promise<{ changes: Partial<LicenseDoc>; event: Parameters<typeof licenseEvent>[0] }>,
  ): Promise<License> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const doc = await ownLicense(store, accountId, key);
      const now = ctx.clock.now();
      const { changes, event } = await apply(doc, now);
      const after = { ...doc, ...changes };
      if (await store.replaceState(doc, changes, [licenseEvent(event, after, now)])) {
        ctx.outbox.flush(store.models.License, doc._id);
        return toLicense(after, now);
      }
    }
    throw new AppError('conflict', 'the licence is being changed by another request; retry');
  }

  return {
    async createLicense(req) {
      if (!isId('prod', req.productId))
        throw AppError.invalid('product_id', 'product_id must be a product id (prod_…)');
      const email = checkEmail('customer_email', req.customerEmail);
      const run = () => issue(req.accountId, req.productId, email);
      if (!req.idempotencyKey) return run();
      const request = { product_id: req.productId, customer_email: email };
      return idempotent(
        store.models.Idempotency,
        `${req.accountId}:create_license`,
        req.idempotencyKey,
        request,
        run,
        ctx.clock.now(),
      );
    },

    async getLicense(req) {
      const doc = await ownLicense(store, req.accountId, req.key);
      const [activations, lastValidated] = await Promise.all([
        store.countActivations(doc._id),
        counter.lastValidatedAt(doc._id),
      ]);
      return {
        ...toLicense(doc, ctx.clock.now(), 'full', activations),
        lastValidatedAt: lastValidated?.toISOString() ?? '',
      };
    },

    async listLicenses(req) {
      if (req.productId && !isId('prod', req.productId))
        throw AppError.invalid('product_id', 'product_id must be a product id (prod_…)');
      if (req.customerEmail.length > 254)
        throw AppError.invalid('customer_email', 'customer_email must be at most 254 characters');
      if (req.status && !statuses.includes(req.status as Status))
        throw AppError.invalid('status', `status must be one of ${statuses.join(', ')}`);
      const now = ctx.clock.now();
      const { items, page } = await store.list(
        req.accountId,
        { productId: req.productId, customerEmail: req.customerEmail, status: req.status as Status | '' },
        req.page,
        now,
      );
      return { data: items.map((d) => toLicense(d, now)), page };
    },

    updateLicense: (req) =>
      change(req.accountId, req.key, async (doc) => {
        const changes: Partial<LicenseDoc> = {};
        if (req.customerEmail !== undefined) {
          const email = checkEmail('customer_email', req.customerEmail);
          Object.assign(changes, { customer_email: email, customer_email_lc: email.toLowerCase() });
        }
        if (Object.keys(req.metadata).length) changes.metadata = mergeMetadata(doc.metadata ?? {}, req.metadata);
        if (!Object.keys(changes).length)
          throw new AppError('invalid_request', 'nothing to change: give customer_email and/or metadata');
        return { changes, event: 'license.updated' };
      }),

    transitionLicense: (req) =>
      change(req.accountId, req.key, async (doc, now) => {
        if (!(actions as readonly string[]).includes(req.action))
          throw AppError.invalid('action', `action must be one of ${actions.join(', ')}`);
        const action = req.action as Action;
        // Renewal takes the product's current policy.
        const current =
          action === 'renew'
            ? fromPolicy((await products.getProduct({ accountId: req.accountId, id: doc.product_id })).policy)
            : doc.policy;
        const next = transition(doc, action, now, current);
        const graceEnds = graceEndsAt(next.expires_at, next.policy.grace_days);
        const notified = action === 'renew' ? false : doc.expired_notified;
        // Filed again in the sweeper's buckets: a renewed or reinstated licence is found when its grace ends (or now, if it has).
        const changes: Partial<LicenseDoc> = {
          status: next.status,
          expires_at: next.expires_at,
          policy: next.policy,
          grace_ends_at: graceEnds,
          expired_notified: notified,
          expiry_bucket: expiryBucket(graceEnds, notified, now),
        };
        return { changes, event: pastTense[action] };
      }),

    async getStats(req) {
      const now = ctx.clock.now();
      // At most 30 × 24 hourly documents per account: the day series is added up from them.
      const [total, buckets] = await Promise.all([
        store.count(req.accountId),
        counter.since(req.accountId, new Date(now.getTime() - 30 * DAY_MS)),
      ]);
      return {
        licensesTotal: total,
        validationsByHour: last24Hours(buckets, now).map((b) => ({
          hour: b.hour.toISOString(),
          validations: b.validations,
          valid: b.valid,
          byCode: b.byCode,
        })),
        validationsByDay: last30Days(buckets, now).map((d) => ({
          day: d.day.toISOString(),
          validations: d.validations,
          valid: d.valid,
          byCode: d.byCode,
        })),
      };
    },
  };
}
