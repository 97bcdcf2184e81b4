import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from '@opentelemetry/api';
import type { RequestOrigin } from '@licensing/proto';

// The call being served, carried implicitly through every await: its request
// id (log lines, outgoing gRPC calls and new events pick it up without each
// function passing it on) and its deadline (store queries and outgoing calls
// get no more time than the caller still waits). Set by the gateway per HTTP
// request and by the gRPC server per call (from the caller's metadata and deadline).
// With tracing on, it also holds the call's trace context (observability/tracing.ts): the span
// that outgoing calls, new events and log lines name as theirs.
interface CallScope {
  requestId: string;
  /** Epoch ms after which nobody waits for the answer; Infinity when the caller set none. */
  deadline: number;
  /** The OpenTelemetry context of the call's span; absent when tracing is off or the call is not traced. */
  trace?: Context;
  /**
   * Who asked (a member, an API key, an app's licence) and from where: set by the edge once it knows
   * (setRequestOrigin), carried to the services with each call, and written on the events the call
   * makes, which is how the audit log learns who changed what. Absent for the system's own work.
   */
  origin?: RequestOrigin;
}

const scope = new AsyncLocalStorage<CallScope>();

/**
 * Before Node 24, AsyncLocalStorage runs on async_hooks: while it is enabled, every async resource the
 * process makes pays an init hook, each process.nextTick of node:http's own answer among them. In a
 * gateway answering cached validations (which open no scope) that was a seventh of its CPU per request
 * (docs/architecture.md, "The request scope without async_hooks on the hot path"). So the storage is enabled only while a
 * scope is open (counted here: each run until its function returns or its promise settles, or a
 * holdScope() until released) and disabled when the last one closes; the next scope enables it again.
 * Work a call left running after it closed (nothing should: background work runs outsideAnyCall)
 * then reads no scope. From Node 24 the storage needs no hooks (AsyncContextFrame) and stays enabled.
 */
const GATED = Number(process.versions.node.split('.')[0]) < 24;
let open = 0;

function closeOne(): void {
  if (--open === 0 && GATED) scope.disable();
}

/** Runs fn in the scope, counted open until fn returns or, when it returns a promise, until that settles. */
function runOpen<T>(store: CallScope, fn: () => T): T {
  open++;
  let result: T;
  try {
    result = scope.run(store, fn);
  } catch (err) {
    closeOne();
    throw err;
  }
  if (result instanceof Promise) result.then(closeOne, closeOne);
  else closeOne();
  return result;
}

/**
 * Keeps the scope storage enabled until the returned release is called (once; later calls do
 * nothing): for a scope whose work outlives the function that opened it, as an HTTP request's
 * middleware chain outlives its first next().
 */
export function holdScope(): () => void {
  open++;
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    closeOne();
  };
}

/** For tests: how many scopes are open, and whether the storage (and so, before Node 24, async_hooks) is enabled. */
export function scopeState(): { open: number; enabled: boolean } {
  return { open, enabled: (scope as unknown as { enabled?: boolean }).enabled !== false };
}

export function withRequestId<T>(requestId: string, fn: () => T, trace?: Context): T {
  return requestId || trace ? runOpen({ requestId, deadline: Infinity, trace }, fn) : fn();
}

/**
 * Runs fn as one call: its request id, the epoch-ms deadline its caller gave, traced, its span's
 * context, and who asked when the caller said (origin).
 */
export function withCallScope<T>(
  requestId: string,
  deadline: number,
  fn: () => T,
  trace?: Context,
  origin?: RequestOrigin,
): T {
  return runOpen(origin ? { requestId, deadline, trace, origin } : { requestId, deadline, trace }, fn);
}

/**
 * Names who is asking in the call being served (the edge, once it has authenticated the caller):
 * the calls it makes from here carry it. Outside a call it does nothing.
 */
export function setRequestOrigin(origin: RequestOrigin): void {
  const call = scope.getStore();
  if (call) call.origin = origin;
}

/**
 * Runs background work outside the call that happened to start it: timers and
 * promises inherit the scope they were made in, and work that outlives its call
 * must neither log its request id nor be held to its deadline.
 */
export function outsideAnyCall<T>(fn: () => T): T {
  return scope.exit(fn);
}

/** The trace context of the call being served (undefined when tracing is off or the call is not traced). */
export function currentTrace(): Context | undefined {
  return scope.getStore()?.trace;
}

/** The request id and trace context of the call being served, in one look-up (log lines want both). */
export function currentCall(): Readonly<CallScope> | undefined {
  return scope.getStore();
}

export function currentRequestId(): string | undefined {
  return scope.getStore()?.requestId || undefined;
}

/** Milliseconds left before the current call's deadline (Infinity outside a call, or without one). */
export function remainingMs(now = Date.now()): number {
  const deadline = scope.getStore()?.deadline ?? Infinity;
  return deadline === Infinity ? Infinity : deadline - now;
}

const SANE_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** A request id taken from a caller only if it is 1–64 characters of A-Z a-z 0-9 . _ : - (else undefined). */
export function saneRequestId(given: string | undefined): string | undefined {
  return given && SANE_ID.test(given) ? given : undefined;
}
