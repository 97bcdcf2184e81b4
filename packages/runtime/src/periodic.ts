import type { Logger } from './logger';

/**
 * A background job run every `intervalMs` (the next run starts after the
 * previous one ends, so runs never overlap). A failing run is logged and
 * tried again next time; stop() waits for a run in progress.
 */
export class PeriodicTask {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private active = false;

  constructor(
    private readonly name: string,
    private readonly run: () => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.active = true;
    const tick = () => {
      this.running = this.run().catch((err) => this.log.warn({ err, task: this.name }, `${this.name} failed; will retry`));
      void this.running.finally(() => {
        if (this.active) this.timer = setTimeout(tick, this.intervalMs);
      });
    };
    this.timer = setTimeout(tick, this.intervalMs);
  }

  async stop(): Promise<void> {
    this.active = false;
    clearTimeout(this.timer);
    await this.running;
  }
}
