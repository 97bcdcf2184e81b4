import { AsyncLocalStorage } from 'node:async_hooks';

// The request id of the call being served, carried implicitly through every
// await: log lines, outgoing gRPC calls and new events pick it up without each
// function passing it on. Set by the gateway per HTTP request and by the gRPC
// server per call (from the `x-request-id` metadata the caller sent).
const scope = new AsyncLocalStorage<{ requestId: string }>();

export function withRequestId<T>(requestId: string, fn: () => T): T {
  return requestId ? scope.run({ requestId }, fn) : fn();
}

export function currentRequestId(): string | undefined {
  return scope.getStore()?.requestId;
}

const SANE_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** A request id taken from a caller only if it is 1–64 characters of A-Z a-z 0-9 . _ : - (else undefined). */
export function saneRequestId(given: string | undefined): string | undefined {
  return given && SANE_ID.test(given) ? given : undefined;
}
