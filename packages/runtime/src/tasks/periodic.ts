import type { Logger } from '../observability/logger';
import { outsideAnyCall } from '../core/request-scope';

/**
 * A background job run every `intervalMs` (the next run starts after the
 * previous one ends, so runs never overlap). A failing run is logged and
 * tried again next time; stop() waits for a run in progress.
 */
export class PeriodicTask {
  private timer?: NodeJS.Timeout;
  /** When the timer fires (epoch ms). */
  private nextAt = 0;
  private running?: Promise<unknown>;
  private active = false;
  /** A soon() asked for while a run was in progress: the next run follows within this, not the interval. */
  private soonAfterRun?: number;

  constructor(
    private readonly name: string,
    private readonly run: () => Promise<unknown>,
    /** A fixed interval, or a function giving the delay before the next run (called after each run). */
    private readonly intervalMs: number | (() => number),
    private readonly log: Logger,
  ) {}

  private delay(): number {
    return typeof this.intervalMs === 'number' ? this.intervalMs : this.intervalMs();
  }

  private readonly tick = () => {
    this.timer = undefined;
    // soon() may be called while serving a call, and its timer would carry that call's scope along.
    this.running = outsideAnyCall(() => this.run()).catch((err) =>
      this.log.warn({ err, task: this.name }, `${this.name} failed; will retry`),
    );
    void this.running.finally(() => {
      this.running = undefined;
      const asked = this.soonAfterRun;
      this.soonAfterRun = undefined;
      if (this.active) this.schedule(Math.min(asked ?? Number.POSITIVE_INFINITY, this.delay()));
    });
  };

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.nextAt = Date.now() + ms;
    this.timer = setTimeout(this.tick, ms);
  }

  start(): void {
    this.active = true;
    this.schedule(this.delay());
  }

  /**
   * Runs within `withinMs` instead of waiting for the next scheduled run. Asked during a run, the next
   * run follows that one within `withinMs` (what the run in progress read may predate what was asked for).
   */
  soon(withinMs: number): void {
    if (!this.active) return;
    if (this.running) {
      this.soonAfterRun = Math.min(this.soonAfterRun ?? withinMs, withinMs);
      return;
    }
    if (!this.timer || Date.now() + withinMs >= this.nextAt) return;
    this.schedule(withinMs);
  }

  async stop(): Promise<void> {
    this.active = false;
    clearTimeout(this.timer);
    await this.running;
  }
}
