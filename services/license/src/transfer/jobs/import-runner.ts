import { AppError, type Logger } from '@licensing/runtime';
import type { ImportDoc } from '../store/imports';
import { dropExpiredExports, failStoppedExports, type ExportDeps } from '../use-cases/exports';
import { ImportRun } from '../use-cases/import-run';
import { failStalledUploads, IMPORT_LEASE_MS, MAX_FAILED_RUNS, type ImportDeps } from '../use-cases/imports';

/** Imports one instance runs side by side (in turn, a batch each), of as many accounts. */
export const IMPORTS_AT_ONCE = 16;

/** One import being run: its run, a batch at a time. */
interface Running {
  doc: ImportDoc;
  epoch: number;
  steps: AsyncGenerator<void, boolean>;
  started: number;
}

/**
 * Runs the imports whose file is complete. Each pass takes the running imports no live run holds (new
 * ones, and those whose run stopped renewing its lease: a crash), claims each by the unique insert of its
 * next epoch, and runs them in turn, one batch of each account's import after the other (an account has
 * one import at a time): a big import of one account never makes another account's small one wait for
 * it. Imports that arrive meanwhile join at the next round; accounts are taken round robin, never oldest
 * first. A run that stops on an error is counted, and the import is failed with it at the third.
 * Also fails the running exports whose writer stopped (their lease lapsed), drops the files of exports
 * past their 24 hours, and fails the uploads whose gateway stopped mid-file (no piece for UPLOAD_IDLE_MS).
 */
export class ImportRunner {
  private lastExportSweep = 0;
  private stopping = false;
  /** The account whose import was taken last: the next to join is the one after it. */
  private lastAccount = '';

  /** A run in progress stops after its batch (the service is stopping). */
  stop(): void {
    this.stopping = true;
  }

  constructor(
    private readonly deps: ImportDeps & ExportDeps,
    private readonly log: Logger,
  ) {}

  /** The sweeps of stopped exports, expired export files and cut-off uploads, once a minute. */
  private async sweep(): Promise<void> {
    const now = this.deps.clock.now();
    if (now.getTime() - this.lastExportSweep <= 60_000) return;
    this.lastExportSweep = now.getTime();
    const failed = await failStoppedExports(this.deps);
    if (failed) this.log.warn({ failed }, 'exports whose gateway stopped before they finished are failed');
    await dropExpiredExports(this.deps);
    const cut = await failStalledUploads(this.deps);
    if (cut) this.log.warn({ failed: cut }, 'import uploads cut off by a gateway that stopped are failed');
  }

  async pass(): Promise<void> {
    const running = new Map<string, Running>();
    try {
      for (;;) {
        if (this.stopping) return;
        // Every round: a pass lasts as long as imports keep arriving, and the sweeps must not wait for it.
        await this.sweep();
        await this.join(running);
        if (!running.size) return;
        // One round: a batch of each account's import, in turn.
        for (const [account, r] of [...running]) {
          if (this.stopping) break;
          let step: IteratorResult<void, boolean>;
          try {
            step = await r.steps.next();
          } catch (err) {
            running.delete(account);
            await this.failedRun(r, err);
            continue;
          }
          if (!step.done) continue;
          running.delete(account);
          this.log.info(
            { import_id: r.doc._id, account_id: account, ms: Date.now() - r.started, finished: step.value },
            step.value ? 'import run finished' : 'import run taken over by another run',
          );
        }
      }
    } finally {
      // Stopping: the runs still held stop at their checkpoint, and are let go at once (resumed from it).
      for (const r of running.values()) {
        await r.steps.return(false).catch(() => undefined);
        await this.deps.imports.checkpoint(r.doc._id, r.epoch, { lease_until: null }).catch(() => undefined);
      }
    }
  }

  /** Claims the imports waiting, of accounts not running one, the account after the last taken first. */
  private async join(running: Map<string, Running>): Promise<void> {
    if (running.size >= IMPORTS_AT_ONCE) return;
    const now = this.deps.clock.now();
    const waiting = (await this.deps.imports.runnable(now)).filter((d) => !running.has(d.account_id));
    const after = (d: ImportDoc) => (d.account_id > this.lastAccount ? 0 : 1);
    waiting.sort((a, b) => after(a) - after(b) || (a.account_id < b.account_id ? -1 : 1));
    for (const doc of waiting) {
      if (running.size >= IMPORTS_AT_ONCE || this.stopping) return;
      if (running.has(doc.account_id)) continue;
      const epoch = await this.deps.imports.claim(doc, now, IMPORT_LEASE_MS);
      if (epoch === null) continue;
      const fresh = await this.deps.imports.byId(doc._id);
      if (!fresh || fresh.epoch !== epoch) continue;
      this.lastAccount = doc.account_id;
      const run = new ImportRun(this.deps, fresh, epoch, () => this.stopping);
      running.set(doc.account_id, { doc: fresh, epoch, steps: run.steps(), started: Date.now() });
    }
  }

  /**
   * A run that stopped on an error (the service or the store away, a bug): counted on the import,
   * which another pass takes up again once its lease lapses; the third fails it with the error.
   */
  private async failedRun(r: Running, err: unknown): Promise<void> {
    const failures = (r.doc.failed_runs ?? 0) + 1;
    const reason = err instanceof AppError ? err.message : 'an internal error';
    this.log.error({ err, import_id: r.doc._id, account_id: r.doc.account_id, failures }, 'import run failed');
    try {
      if (failures < MAX_FAILED_RUNS) {
        await this.deps.imports.checkpoint(r.doc._id, r.epoch, { failed_runs: failures });
        return;
      }
      const now = this.deps.clock.now();
      const failed = await this.deps.imports.checkpoint(r.doc._id, r.epoch, {
        failed_runs: failures,
        state: 'failed',
        failure: `the import stopped on an error ${failures} times: ${reason}`,
        finished_at: now,
        updated_at: now,
        lease_until: null,
      });
      if (failed) await this.deps.imports.deleteChunks(r.doc._id);
    } catch (e) {
      this.log.warn({ err: e, import_id: r.doc._id }, 'could not record a failed import run (retried with the import)');
    }
  }
}
