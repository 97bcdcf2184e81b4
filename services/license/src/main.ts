import { LicenseServiceService, ProductServiceClient, WebhookServiceClient } from '@licensing/proto';
import {
  createClient,
  internalCredential,
  PeriodicTask,
  runMain,
  startService,
  type ServiceContext,
  type ServiceRecipe,
  type StartOptions,
} from '@licensing/runtime';
import { licenseSchema, type LicenseConfig } from './config';
import { activationHandlers } from './handlers/activation-handlers';
import { customerHandlers } from './handlers/customer-handlers';
import { fileHandlers } from './handlers/file-handlers';
import { licenseHandlers } from './handlers/license-handlers';
import { productLicenceHandlers } from './handlers/product-licence-handlers';
import { refusingArchivedProducts } from './handlers/archived-products';
import { rerollHandlers } from './handlers/reroll-handlers';
import { validationHandlers } from './handlers/validation-handlers';
import { ExpirySweeper } from './jobs/expiry-sweeper';
import { LapsedSeatSweeper } from './jobs/lapsed-seat-sweeper';
import { LicenseCache } from './caches/license-cache';
import { ProductCache } from './caches/product-cache';
import { licenseModels } from './store/models';
import { LicenseStore } from './store/queries';
import { ValidationCounter } from './jobs/validation-counter';
import { ValidationStatsStore, statsModels } from './store/stats';
import type { LicenseDeps } from './use-cases/deps';
import { licenseAccess } from './access';
import { BulkLicenses } from './store/bulk-licenses';
import { RetiredKeyStore } from './store/retired-keys';
import { licenseCore } from './use-cases/license-core';
import { transferModule } from './transfer/module';

/** Expired validation telemetry deleted per collection per pass (MongoDB's TTL indexes do the rest there). */
const TELEMETRY_CLEANUP_BATCH = 5000;

type Ctx = ServiceContext<LicenseConfig>;

/** The product service's client and the cache in front of it (kept exact by product.updated). */
function productsOf(ctx: Ctx) {
  const products = createClient(
    ProductServiceClient,
    ctx.config.PRODUCT_GRPC_ADDR,
    internalCredential('license', ctx.config, ctx.tracing),
  );
  const cache = new ProductCache(
    products.call,
    ctx.bus,
    ctx.config.PRODUCT_CACHE_SIZE,
    ctx.config.PRODUCT_CACHE_TTL_MS,
  );
  return { products, cache };
}

/** The licence core's stores, its cache and the dependencies of its use cases. */
function coreOf(ctx: Ctx, productCache: ProductCache) {
  const models = licenseModels(ctx.db);
  const store = new LicenseStore(models);
  const retired = new RetiredKeyStore(models);
  for (const model of [models.License, models.Activation, models.Erasure, models.LicenseDeletion])
    ctx.outbox.track(model);
  const cacheResults = ctx.metrics.counter('licensing_license_cache_total', ['result']);
  const licenseCache = new LicenseCache(
    store,
    ctx.bus,
    ctx.config.LICENSE_CACHE_SIZE,
    ctx.config.LICENSE_CACHE_TTL_MS,
    (result) => cacheResults.inc({ result }),
    Date.now,
    retired,
  );
  const deps: LicenseDeps = {
    store,
    outbox: licenseCache.outbox(ctx.outbox),
    clock: ctx.clock,
    products: productCache,
    licenses: licenseCache,
    retired,
  };
  return { store, retired, licenseCache, deps };
}

/** The periodic jobs of the licence core: expiry, lapsed seats, old telemetry. */
function coreJobs(ctx: Ctx, deps: LicenseDeps, productCache: ProductCache, stats: ValidationStatsStore) {
  const sweeper = new ExpirySweeper(deps.store, deps.outbox, ctx.clock, productCache);
  const expiry = new PeriodicTask(
    'licence expiry sweep',
    () => sweeper.sweep(),
    ctx.config.EXPIRY_SWEEP_INTERVAL_MS,
    ctx.log,
  );
  // Floating seats that lapsed and that no activation reclaimed (jobs/lapsed-seat-sweeper.ts).
  const lapsedSeats = new LapsedSeatSweeper(deps.store, deps.outbox, ctx.clock);
  const reclaim = new PeriodicTask(
    'lapsed seat sweep',
    () => lapsedSeats.sweep(),
    ctx.config.EXPIRY_SWEEP_INTERVAL_MS,
    ctx.log,
  );
  // Telemetry past its retention: MongoDB's TTL indexes delete it, FerretDB's never do (store/stats.ts).
  const telemetryCleanup = new PeriodicTask(
    'validation telemetry cleanup',
    () => stats.deleteExpired(ctx.clock.now(), TELEMETRY_CLEANUP_BATCH),
    ctx.config.EXPIRY_SWEEP_INTERVAL_MS,
    ctx.log,
  );
  return [expiry, reclaim, telemetryCleanup];
}

export const licenseService: ServiceRecipe<typeof licenseSchema> = {
  name: 'license',
  schema: licenseSchema,
  async setup(ctx) {
    const { products, cache: productCache } = productsOf(ctx);
    const { store, retired, licenseCache, deps } = coreOf(ctx, productCache);
    const telemetryDropped = ctx.metrics.counter('licensing_validation_telemetry_dropped_total', ['kind']);
    const stats = new ValidationStatsStore(statsModels(ctx.db));
    const counter = new ValidationCounter(
      stats,
      ctx.log,
      ctx.config.STATS_FLUSH_INTERVAL_MS,
      (seen) => store.markSeen(seen), // the activations' last_seen_at, with each flush
      (kind) => telemetryDropped.inc({ kind }),
    );
    // Imports, exports and licence batches (transfer/README.md): given the core's table and nothing else of it.
    const webhooks = createClient(
      WebhookServiceClient,
      ctx.config.WEBHOOK_GRPC_ADDR,
      internalCredential('license', ctx.config, ctx.tracing),
    );
    const transfer = transferModule(ctx, {
      core: licenseCore({ bulk: new BulkLicenses(store.models), outbox: deps.outbox }),
      products: products.call,
      productCache,
      webhooks: webhooks.call,
      outbox: deps.outbox,
      idempotency: store.models.Idempotency,
    });
    ctx.grpc.add(
      LicenseServiceService,
      {
        ...refusingArchivedProducts(licenseHandlers(deps, counter), productCache),
        ...productLicenceHandlers({
          models: store.models,
          issuingFor: transfer.issuingFor,
          products: productCache,
        }),
        ...validationHandlers(ctx, {
          licenses: licenseCache,
          store,
          counter,
          clock: ctx.clock,
          products: productCache,
        }),
        ...activationHandlers(deps),
        ...fileHandlers({ store, clock: ctx.clock, signer: products.call, products: productCache }),
        ...customerHandlers(deps, transfer.erasure),
        ...rerollHandlers({ ...deps, retired }),
        ...transfer.licenseHandlers,
      },
      licenseAccess,
    );
    const jobs = coreJobs(ctx, deps, productCache, stats);
    counter.start();
    for (const job of jobs) job.start();
    transfer.start();
    return async () => {
      await transfer.stop();
      for (const job of jobs) await job.stop();
      await counter.stop(); // keeps the last seconds of counts
      products.close();
      webhooks.close();
    };
  },
};

export const start = (opts?: StartOptions<LicenseConfig>) => startService(licenseService, opts);

if (require.main === module) runMain('license-service', () => start());
