import {
  ImportServiceService,
  LicenseServiceService,
  ProductServiceClient,
  WebhookServiceClient,
} from '@licensing/proto';
import {
  createClient,
  internalCredential,
  PeriodicTask,
  runMain,
  startService,
  type ServiceRecipe,
  type StartOptions,
} from '@licensing/runtime';
import { licenseSchema, type LicenseConfig } from './config';
import { activationHandlers } from './handlers/activation-handlers';
import { customerHandlers } from './handlers/customer-handlers';
import { fileHandlers } from './handlers/file-handlers';
import { licenseHandlers } from './handlers/license-handlers';
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
import { importAccess, licenseAccess } from './access';
import { importHandlers } from './handlers/import-handlers';
import { ImportRunner } from './jobs/import-runner';
import { ImportStore, importModels } from './store/imports';
import { ImportedLicenses } from './store/imported-licenses';
import { rerollBatchHandlers } from './handlers/reroll-batch-handlers';
import { LicenseBatchRunner } from './jobs/license-batch-runner';
import { LicenseBatchStore } from './store/batches';
import { RetiredKeyStore } from './store/retired-keys';

/** Expired validation telemetry deleted per collection per pass (MongoDB's TTL indexes do the rest there). */
const TELEMETRY_CLEANUP_BATCH = 5000;

export const licenseService: ServiceRecipe<typeof licenseSchema> = {
  name: 'license',
  schema: licenseSchema,
  async setup(ctx) {
    const models = licenseModels(ctx.db);
    const store = new LicenseStore(models);
    const retired = new RetiredKeyStore(models);
    const batches = new LicenseBatchStore(models);
    const products = createClient(
      ProductServiceClient,
      ctx.config.PRODUCT_GRPC_ADDR,
      internalCredential('license', ctx.config, ctx.tracing),
    );
    // Only an import calls it: it recreates the webhook endpoints of an exported account.
    const webhooks = createClient(
      WebhookServiceClient,
      ctx.config.WEBHOOK_GRPC_ADDR,
      internalCredential('license', ctx.config, ctx.tracing),
    );
    const telemetryDropped = ctx.metrics.counter('licensing_validation_telemetry_dropped_total', ['kind']);
    const stats = new ValidationStatsStore(statsModels(ctx.db));
    const counter = new ValidationCounter(
      stats,
      ctx.log,
      ctx.config.STATS_FLUSH_INTERVAL_MS,
      (seen) => store.markSeen(seen), // the activations' last_seen_at, with each flush
      (kind) => telemetryDropped.inc({ kind }),
    );
    const expiry = new PeriodicTask(
      'licence expiry sweep',
      () => sweeper.sweep(),
      ctx.config.EXPIRY_SWEEP_INTERVAL_MS,
      ctx.log,
    );
    ctx.outbox.track(store.models.License);
    ctx.outbox.track(store.models.Activation);
    ctx.outbox.track(store.models.Erasure);
    ctx.outbox.track(store.models.LicenseDeletion);
    ctx.outbox.track(store.models.LicenseBatch);
    const productCache = new ProductCache(
      products.call,
      ctx.bus,
      ctx.config.PRODUCT_CACHE_SIZE,
      ctx.config.PRODUCT_CACHE_TTL_MS,
    );
    const sweeper = new ExpirySweeper(store, ctx.outbox, ctx.clock, productCache);
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
    const batchDeps = { ...deps, retired, batches };
    const batchRunner = new LicenseBatchRunner(batchDeps, ctx.log);
    const batchSweep = new PeriodicTask(
      'licence batch sweep',
      () => batchRunner.sweep(),
      ctx.config.LICENSE_BATCH_SWEEP_INTERVAL_MS,
      ctx.log,
    );
    // Floating seats that lapsed and that no activation reclaimed (jobs/lapsed-seat-sweeper.ts).
    const lapsedSeats = new LapsedSeatSweeper(store, deps.outbox, ctx.clock);
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
    // Imports and exports: the job runs the imports whose file is complete.
    const importStore = new ImportStore(importModels(ctx.db));
    ctx.grpc.add(
      LicenseServiceService,
      {
        ...licenseHandlers(deps, counter),
        ...validationHandlers(ctx, {
          licenses: licenseCache,
          store,
          counter,
          clock: ctx.clock,
          products: productCache,
        }),
        ...activationHandlers(deps),
        ...fileHandlers({ store, clock: ctx.clock, signer: products.call, products: productCache }),
        ...customerHandlers(deps, batches, importStore),
        ...rerollBatchHandlers(batchDeps, batchRunner),
      },
      licenseAccess,
    );
    ctx.outbox.track(importStore.models.ImportEvents);
    const importDeps = {
      licenses: new ImportedLicenses(store.models),
      imports: importStore,
      products: products.call,
      webhooks: webhooks.call,
      outbox: licenseCache.outbox(ctx.outbox),
      clock: ctx.clock,
      log: ctx.log,
      exportLeaseMs: ctx.config.EXPORT_LEASE_MS,
    };
    const importRunner = new ImportRunner(importDeps, ctx.log);
    const imports = new PeriodicTask(
      'import job',
      () => importRunner.pass(),
      ctx.config.IMPORT_POLL_INTERVAL_MS,
      ctx.log,
    );
    ctx.grpc.add(
      ImportServiceService,
      importHandlers(importDeps, () => imports.soon(0)),
      importAccess,
    );
    counter.start();
    expiry.start();
    reclaim.start();
    telemetryCleanup.start();
    imports.start();
    batchSweep.start();
    return async () => {
      importRunner.stop();
      await imports.stop();
      await expiry.stop();
      await reclaim.stop();
      await telemetryCleanup.stop();
      await batchSweep.stop();
      await batchRunner.stop();
      await counter.stop(); // keeps the last seconds of counts
      products.close();
      webhooks.close();
    };
  },
};

export const start = (opts?: StartOptions<LicenseConfig>) => startService(licenseService, opts);

if (require.main === module) runMain('license-service', () => start());
