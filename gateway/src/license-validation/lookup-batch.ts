import type {
  ValidateLicenseRequest,
  ValidateLicenseResponse,
  ValidateLicensesRequest,
  ValidateLicensesResponse,
} from '@licensing/proto';
import {
  AppError,
  currentCall,
  outsideAnyCall,
  traceparentOf,
  withRequestId,
  type TraceContext,
} from '@licensing/runtime';

// Part of a validation's flow through license-validation/, drawn in validator.ts's header.

interface LicenseCalls {
  validateLicense(req: ValidateLicenseRequest): Promise<ValidateLicenseResponse>;
  validateLicenses(req: ValidateLicensesRequest): Promise<ValidateLicensesResponse>;
}

interface Pending {
  req: ValidateLicenseRequest;
  requestId: string;
  /** The request's trace context, when it is traced. */
  trace?: TraceContext;
  resolve(out: ValidateLicenseResponse): void;
  reject(err: unknown): void;
}

/** Lookups one call carries: below the most a call may (proto/rules' MAX_VALIDATIONS_PER_CALL; a test holds it so). */
export const MAX_BATCH = 64;

/**
 * The validations this gateway sends the licence service in one turn of its
 * event loop go in one ValidateLicenses call: under load many requests miss the
 * cache at once (a cold start, a new gateway replica), and a gRPC call costs
 * both sides more than answering a validation does (measured in
 * docs/benchmarks.md). A validation alone in its turn goes as ValidateLicense,
 * and waits for nothing: batches form only when requests already overlap.
 * Each answer is its own request's, with its request id (and trace); a failed batch is
 * tried again call by call when the service was unavailable (a replica that
 * does not know ValidateLicenses yet, during an upgrade, answers UNIMPLEMENTED).
 */
export class ValidationBatcher {
  private queue: Pending[] = [];
  private scheduled = false;

  constructor(private readonly calls: LicenseCalls) {}

  validate(req: ValidateLicenseRequest): Promise<ValidateLicenseResponse> {
    return new Promise((resolve, reject) => {
      const call = currentCall();
      this.queue.push({ req, requestId: call?.requestId ?? '', trace: call?.trace, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // After the I/O callbacks of this turn: the requests that arrived with this one join it.
        outsideAnyCall(() =>
          setImmediate(() => {
            this.scheduled = false;
            this.send();
          }),
        );
      }
      if (this.queue.length >= MAX_BATCH) this.send();
    });
  }

  private send(): void {
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 1) this.one(batch[0]);
    if (batch.length <= 1) return;
    this.calls
      .validateLicenses({
        validations: batch.map((p) => p.req),
        request_ids: batch.map((p) => p.requestId),
        // Each validation's own trace (the call itself is in none: it serves many requests).
        traceparents: batch.some((p) => p.trace) ? batch.map((p) => traceparentOf(p.trace) ?? '') : [],
      })
      .then(
        ({ results }) => {
          // Answers are matched by position: a count that differs matches none.
          const broken = new AppError('internal', 'the licence service answered a different number of validations');
          for (const [i, p] of batch.entries())
            if (results.length === batch.length) p.resolve(results[i]);
            else p.reject(broken);
        },
        (err: unknown) => {
          if (err instanceof AppError && err.code === 'service_unavailable') for (const p of batch) this.one(p);
          else for (const p of batch) p.reject(err);
        },
      );
  }

  private one(p: Pending): void {
    withRequestId(p.requestId, () => this.calls.validateLicense(p.req), p.trace).then(p.resolve, p.reject);
  }
}
