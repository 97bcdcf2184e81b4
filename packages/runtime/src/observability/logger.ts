import { writeSync, writevSync } from 'node:fs';
import pino, { type DestinationStream, type Logger } from 'pino';
import { currentCall } from '../core/request-scope';
import { traceIdsOf } from './tracing';

export type { Logger };

// Paths that may carry secrets anywhere we log objects. Redaction is a second
// line of defence: code should not log these in the first place.
const redact = {
  paths: [
    'secret',
    '*.secret',
    'api_key',
    '*.api_key',
    'password',
    '*.password',
    'authorization',
    '*.authorization',
    'headers.authorization',
    'req.headers.authorization',
    'license_key',
    '*.license_key',
    'key',
    '*.key',
    'internal_token',
    '*.internal_token',
  ],
  censor: '[redacted]',
};

// Shapes of secrets, wherever they hide in a line (an error message quoting a
// URL, a value under an unexpected name): API keys (lk_full_…, lk_val_…),
// webhook secrets (whsec_…) and licence keys (groups of five base32
// characters joined by hyphens, in any case, raw or percent-encoded).
const SECRET_SHAPES =
  /\b(?:lk_(?:full|val)_[A-Za-z0-9]+|whsec_[A-Za-z0-9+/=_-]+|[0-9A-Za-z]{5}(?:(?:-|%2D)[0-9A-Za-z]{5}){3,})/g;
// The password of a connection URL (mongodb://user:password@host, redis://…).
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^:@/\s]*:)[^@/\s]+@/gi;

/** The text with every secret-shaped token, and every password in a URL, replaced by [redacted]. */
export function scrubSecrets(text: string): string {
  return text.replace(SECRET_SHAPES, '[redacted]').replace(URL_PASSWORD, '$1[redacted]@');
}

/** What an unexpected error may say in a log line: its kind and a scrubbed message and stack. */
export function errorSummary(err: unknown): { type: string; message: string; stack?: string } {
  if (!(err instanceof Error)) return { type: typeof err, message: scrubSecrets(String(err)).slice(0, 500) };
  return {
    type: err.name,
    message: scrubSecrets(err.message).slice(0, 500),
    stack: err.stack && scrubSecrets(err.stack),
  };
}

let destination: DestinationStream | undefined;

/** Where new loggers write (default stdout). Tests use it to read a whole run's log output. */
export function setLogDestination(stream: DestinationStream | undefined): void {
  destination = stream;
}

/** Where a high-volume log (the gateway's access log) writes its finished lines. */
export interface LineSink {
  write(line: string): void;
  /** Writes out what is buffered, before returning (a graceful stop, or the process exiting). */
  flushSync(): void;
}

/** How long a buffered line may wait before it is written: what a crash (SIGKILL) can lose at most. */
export const LINE_FLUSH_MS = 20;
/** Buffered lines beyond this are written at once, synchronously: a stuck stdout slows the process (as a synchronous logger would) instead of filling its memory. */
const LINE_BUFFER_MAX_BYTES = 4 * 1024 * 1024;

/** The size of each buffer lines are copied into (one write(2) takes several). */
const LINE_CHUNK_BYTES = 64 * 1024;

/**
 * A buffered stdout for lines that are already JSON: each line is copied into a preallocated buffer
 * (no joined strings to collect), and the buffers are written together by one writev(2) every
 * LINE_FLUSH_MS (not one write per line), and at once when the process exits. In tests
 * that read the log (setLogDestination) the lines go to that destination instead, as every logger's do.
 */
export function bufferedLineSink(fd = 1): LineSink {
  if (destination) {
    const to = destination;
    return { write: (line) => void to.write(line), flushSync: () => undefined };
  }
  let full: Buffer[] = [];
  let current = Buffer.allocUnsafe(LINE_CHUNK_BYTES);
  let used = 0;
  let buffered = 0;
  /** Taken and not (wholly) written yet: stdout is a pipe that was full (EAGAIN, or a partial write). */
  let unsent: Buffer[] = [];
  /** What is unsent, then everything buffered since, and a fresh buffer for what comes next. */
  const take = (): Buffer[] => {
    const out = unsent.concat(full);
    if (used) out.push(current.subarray(0, used));
    unsent = [];
    full = [];
    current = Buffer.allocUnsafe(LINE_CHUNK_BYTES);
    used = 0;
    buffered = 0;
    return out;
  };
  const flushSync = () => {
    if (!buffered && !unsent.length) return;
    writeAllSync(fd, take());
  };
  // One writev(2) per tick, made synchronously: nothing is ever in flight, so a flush at exit writes
  // after everything before it, in order. A non-blocking pipe whose reader fell behind takes part of it
  // or none (EAGAIN): the rest goes first at the next tick. A blocking one (stdout as a process starts)
  // makes the tick wait for its reader, as the other loggers' synchronous lines do. The tick is armed by
  // the first line after a write, so an idle process never wakes for it.
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    timer = undefined;
    if (!buffered && !unsent.length) return;
    const out = take();
    let written = 0;
    try {
      written = writevSync(fd, out);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return; // stdout gone: nowhere to write them
    }
    unsent = after(out, written);
    // A reader that stopped reading: wait for it (two seconds at most) rather than fill the memory.
    if (unsent.reduce((n, b) => n + b.length, 0) > LINE_BUFFER_MAX_BYTES) writeAllSync(fd, take());
    if (unsent.length) arm();
  };
  const arm = () => {
    if (timer) return;
    timer = setTimeout(tick, LINE_FLUSH_MS);
    timer.unref();
  };
  process.once('exit', flushSync);
  return {
    write(line) {
      const size = Buffer.byteLength(line);
      if (used + size > LINE_CHUNK_BYTES) {
        if (used) full.push(current.subarray(0, used));
        current = Buffer.allocUnsafe(Math.max(LINE_CHUNK_BYTES, size));
        used = 0;
      }
      used += current.write(line, used);
      buffered += size;
      if (buffered > LINE_BUFFER_MAX_BYTES) flushSync();
      else arm();
    },
    flushSync,
  };
}

/** The buffers without their first `n` bytes. */
function after(buffers: Buffer[], n: number): Buffer[] {
  const rest: Buffer[] = [];
  for (const b of buffers) {
    if (n >= b.length) n -= b.length;
    else {
      rest.push(n ? b.subarray(n) : b);
      n = 0;
    }
  }
  return rest;
}

/** Writes every byte, waiting out a full pipe (EAGAIN) for up to two seconds in all; stdout gone: dropped. */
function writeAllSync(fd: number, buffers: Buffer[]): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  let waitedMs = 0;
  for (let b of buffers) {
    while (b.length) {
      try {
        b = b.subarray(writeSync(fd, b));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || waitedMs >= 2000) return;
        Atomics.wait(pause, 0, 0, 5);
        waitedMs += 5;
      }
    }
  }
}

/**
 * JSON lines with fixed keys: level, time, service, msg, and request_id
 * whenever the line is written while serving a request (see request-scope),
 * with trace_id and span_id when that request is traced (tracing.ts).
 */
export function createLogger(service: string, level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  const options = {
    name: service,
    level,
    redact,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    // The last line of defence: no line leaves with a secret-shaped token in it.
    hooks: { streamWrite: scrubSecrets },
    mixin: (merge: object) => {
      const call = currentCall();
      // A new object each time: pino merges the line's own fields into what the mixin returns.
      if (!call) return {};
      const ids = traceIdsOf(call.trace);
      const requestId = call.requestId && !('request_id' in merge) ? call.requestId : undefined;
      if (!ids) return requestId ? { request_id: requestId } : {};
      return requestId ? { request_id: requestId, ...ids } : ids;
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
