import type { CounterSeries } from '@licensing/runtime';
import type { TallyCell } from './tally';

// Part of a validation's flow through license-validation/, drawn in validator.ts's header.
//
// A validation's JSON answer, kept on its validation-cache entry for the rest of the current second,
// so the same request asked again (an app on many machines, a client retrying) is answered without
// judging and serialising again. It is exact: the rules give the same answer for the whole second
// (cache_until counts from the second's start) unless the licence's status changes with time inside
// it, so an answer is kept only until the earlier of the second's end and that change
// (nextStatusChange); every event that changes the licence drops the entry, and this with it. Each
// time it is sent it still counts: a validation in the tally, by answer code and as a cache hit.
// Its staleness bound: docs/architecture.md, "A map of the caches".

export class SentAnswer {
  /** UTF-8 bytes of `body`, for Content-Length. */
  readonly length: number;

  constructor(
    readonly body: string,
    /** What it answered: the caller's key scope (it decides whether the e-mail and metadata show), product and machine asked for. */
    private readonly scope: string,
    private readonly productId: string,
    private readonly fingerprint: string,
    /** When it holds, as epoch ms: from its judgement until the second ends or the status changes. */
    private readonly fromMs: number,
    private readonly untilMs: number,
    /** What each sending of it counts. */
    readonly counts: AnswerCount,
  ) {
    this.length = Buffer.byteLength(body);
  }

  /** Is this the answer to the same request at `nowMs`? */
  answers(scope: string, productId: string, fingerprint: string, nowMs: number): boolean {
    return (
      nowMs < this.untilMs &&
      nowMs >= this.fromMs &&
      fingerprint === this.fingerprint &&
      scope === this.scope &&
      productId === this.productId
    );
  }
}

/**
 * What one validation answered at the gateway counts (answered afresh or sent again alike): in the
 * tally (its cell), by answer code, and as a cache hit when it came from a cache entry.
 */
export class AnswerCount {
  constructor(
    private readonly cell: TallyCell,
    private readonly byCode: CounterSeries,
    private readonly hits: CounterSeries | undefined,
  ) {}

  /** The answer's code (not_found, valid, …). */
  get code(): string {
    return this.cell.code;
  }

  add(atMs: number): void {
    this.cell.add(atMs);
    this.byCode.inc();
    this.hits?.inc();
  }
}

/** The end of the second `nowMs` is in (epoch ms). */
export const endOfSecond = (nowMs: number): number => nowMs - (nowMs % 1000) + 1000;
