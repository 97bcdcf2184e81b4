import type { Logger } from '@licensing/runtime';
import { dropExpiredExports, failStoppedExports, type ExportDeps } from '../use-cases/exports';
import { failStalledUploads, IMPORT_LEASE_MS, ImportRun, type ImportDeps } from '../use-cases/imports';

/**
 * Runs the imports whose file is complete, one at a time per instance: each pass takes the running
 * imports no live run holds (new ones, and those whose run stopped renewing its lease: a crash), claims
 * one by the unique insert of its next epoch, and runs it from its checkpoint to the end. Also fails the
 * running exports whose writer stopped (their lease lapsed), drops the files of exports past their 24 hours,
 * and fails the uploads whose gateway stopped mid-file (no piece for UPLOAD_IDLE_MS).
 */
export class ImportRunner {
  private lastExportSweep = 0;
  private stopping = false;

  /** A run in progress stops after its batch (the service is stopping). */
  stop(): void {
    this.stopping = true;
  }

  constructor(
    private readonly deps: ImportDeps & ExportDeps,
    private readonly log: Logger,
  ) {}

  async pass(): Promise<void> {
    const now = this.deps.clock.now();
    if (now.getTime() - this.lastExportSweep > 60_000) {
      this.lastExportSweep = now.getTime();
      const failed = await failStoppedExports(this.deps);
      if (failed) this.log.warn({ failed }, 'exports whose gateway stopped before they finished are failed');
      await dropExpiredExports(this.deps);
      const cut = await failStalledUploads(this.deps);
      if (cut) this.log.warn({ failed: cut }, 'import uploads cut off by a gateway that stopped are failed');
    }
    for (const doc of await this.deps.imports.runnable(now)) {
      if (this.stopping) return;
      const epoch = await this.deps.imports.claim(doc, now, IMPORT_LEASE_MS);
      if (epoch === null) continue;
      const fresh = await this.deps.imports.byId(doc._id);
      if (!fresh || fresh.epoch !== epoch) continue;
      const started = Date.now();
      const finished = await new ImportRun(this.deps, fresh, epoch, () => this.stopping).run();
      this.log.info(
        { import_id: doc._id, account_id: doc.account_id, ms: Date.now() - started, finished },
        finished ? 'import run finished' : 'import run taken over by another run',
      );
    }
  }
}
