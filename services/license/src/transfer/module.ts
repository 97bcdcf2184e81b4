import { ImportServiceService, type LicenseServiceService } from '@licensing/proto';
import { PeriodicTask, type Handlers, type Outbox, type ServiceContext } from '@licensing/runtime';
import type { TransferErasure } from '../use-cases/license-core';
import type { LicenseCore } from '../use-cases/license-core';
import { importAccess } from './access';
import type { TransferConfig } from './config';
import { batchHandlers } from './handlers/batch-handlers';
import { importHandlers } from './handlers/import-handlers';
import { ImportRunner } from './jobs/import-runner';
import { LicenseBatchRunner } from './jobs/license-batch-runner';
import { batchModels, LicenseBatchStore } from './store/batches';
import { ImportStore, importModels } from './store/imports';
import { transferErasure } from './use-cases/erasure';
import type { ProductAdmin, WebhookAdmin } from './use-cases/imports';
import type { BatchDeps } from './use-cases/license-batches';

// The transfer module's composition root (README.md): its collections, its jobs and its gRPC calls,
// made from what the licence service's main.ts hands it: the licence core's table, the product and
// webhook services' clients, and the outbox that publishes its events.

/** What the module is given. */
export interface TransferParts {
  /** The licence core's table: the only way the module reads or writes a licence. */
  core: LicenseCore;
  /** The product service: an import's products (read, created). */
  products: ProductAdmin;
  /** The product service through the licence service's product cache: a licence batch's product and policy. */
  productCache: BatchDeps['products'];
  /** The webhook service: an import's webhook endpoints. */
  webhooks: WebhookAdmin;
  /** Publishes at once the events a write recorded (the relay retries what this misses). */
  outbox: Pick<Outbox, 'flush'>;
  /** The service's Idempotency-Key records (a licence batch under a key is stored once). */
  idempotency: BatchDeps['idempotency'];
}

/** The module as the licence service runs it. */
export interface TransferModule {
  /** CreateLicenseBatch and GetLicenseBatch, served on the licence service's LicenseService. */
  licenseHandlers: Pick<Handlers<typeof LicenseServiceService>, 'createLicenseBatch' | 'getLicenseBatch'>;
  /** What a customer's erasure asks of its licence batches and export files. */
  erasure: TransferErasure;
  /** Whether a batch of the product is still issuing (a product with one is not deleted: HasLicenses). */
  issuingFor(accountId: string, productId: string): Promise<boolean>;
  start(): void;
  stop(): Promise<void>;
}

export function transferModule(ctx: ServiceContext<TransferConfig>, parts: TransferParts): TransferModule {
  const { core, products, webhooks, outbox } = parts;
  const batches = new LicenseBatchStore(batchModels(ctx.db));
  ctx.outbox.track(batches.model);
  const batchDeps: BatchDeps = {
    batches,
    licenses: core,
    products: parts.productCache,
    idempotency: parts.idempotency,
    outbox,
    clock: ctx.clock,
  };
  const batchRunner = new LicenseBatchRunner(batchDeps, ctx.log);
  const batchSweep = new PeriodicTask(
    'licence batch sweep',
    () => batchRunner.sweep(),
    ctx.config.LICENSE_BATCH_SWEEP_INTERVAL_MS,
    ctx.log,
  );
  // Imports and exports: the job runs the imports whose file is complete.
  const importStore = new ImportStore(importModels(ctx.db));
  ctx.outbox.track(importStore.models.ImportEvents);
  // A new import or export carries its import.created or export.created (the audit log's) in its outbox.
  ctx.outbox.track(importStore.models.Import);
  ctx.outbox.track(importStore.models.Export);
  const importDeps = {
    licenses: core,
    imports: importStore,
    products,
    webhooks,
    outbox,
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
  return {
    licenseHandlers: batchHandlers(batchDeps, batchRunner),
    erasure: transferErasure(batches, importStore),
    issuingFor: (accountId, productId) => batches.runningFor(accountId, productId),
    start() {
      imports.start();
      batchSweep.start();
    },
    async stop() {
      importRunner.stop();
      await imports.stop();
      await batchSweep.stop();
      await batchRunner.stop();
    },
  };
}
