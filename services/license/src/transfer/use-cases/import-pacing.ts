import { setImmediate as nextTurn } from 'node:timers/promises';
import { ImportFileReader, type FileRow } from '../domain/import-formats';
import type { ImportFormat } from '../domain/import-rows';

// An import's work is cut into short stretches between turns of the event loop: the licence service answers validations,
// activations and issuance for every account from the same loop, so no import may hold it for long.

/** Rows checked between two turns at most (a row is at most 256 KiB: TURN_MS bounds the heavy ones). */
export const ROWS_PER_TURN = 100;
/** Work done between two turns at most, whatever the rows. */
export const TURN_MS = 10;
/** Bytes of a piece parsed at once: a piece (up to 1 MiB) is read a slice at a time, a turn after each. */
export const SLICE_BYTES = 32 * 1024;

/**
 * Gives the event loop a turn (after the I/O already waiting: every other call is served before the
 * import goes on) after each slice of a file parsed, and after ROWS_PER_TURN rows or TURN_MS of checks.
 */
export class Breather {
  private since = performance.now();
  private rows = 0;
  /** Turns given so far. */
  yields = 0;

  /** After one row's work. */
  async afterRow(): Promise<void> {
    if (++this.rows >= ROWS_PER_TURN || performance.now() - this.since >= TURN_MS) await this.turn();
  }

  /** A turn now. */
  async turn(): Promise<void> {
    await nextTurn();
    this.yields++;
    this.rows = 0;
    this.since = performance.now();
  }
}

/**
 * A file's data rows, a slice of a piece at a time, breathing between slices. `piece(seq)` reads the
 * stored piece (null: it is missing).
 */
export async function* fileRows(
  format: ImportFormat,
  chunks: number,
  piece: (seq: number) => Promise<Uint8Array | null>,
  breather: Breather,
  missing: (seq: number) => Error,
): AsyncGenerator<FileRow> {
  const reader = new ImportFileReader(format);
  for (let seq = 0; seq < chunks; seq++) {
    const data = await piece(seq);
    if (!data) throw missing(seq);
    for (let at = 0; at < data.byteLength; at += SLICE_BYTES) {
      yield* reader.push(data.subarray(at, at + SLICE_BYTES));
      await breather.turn();
    }
  }
  yield* reader.end();
}

/**
 * The file's data rows, counted without reading them (the progress has its total): its lines that
 * hold anything but white space, less a CSV file's header. A quoted CSV field over several lines
 * counts more than once: the total is made exact when the import is done.
 */
export async function countRows(
  format: ImportFormat,
  chunks: number,
  piece: (seq: number) => Promise<Uint8Array | null>,
  breather: Breather,
  missing: (seq: number) => Error,
): Promise<number> {
  const counter = new LineCounter();
  let lines = 0;
  for (let seq = 0; seq < chunks; seq++) {
    const data = await piece(seq);
    if (!data) throw missing(seq);
    lines += counter.push(data).length;
    await breather.turn();
  }
  lines += counter.end().length;
  return format === 'jsonl' ? lines : Math.max(lines - 1, 0);
}

/** A jsonl file's rows counted without reading them: its lines that hold anything but white space. */
class LineCounter {
  private filled = false;

  push(data: Uint8Array): { length: number } {
    let n = 0;
    for (let i = 0; i < data.length; i++) {
      const b = data[i];
      if (b === 10) {
        if (this.filled) n++;
        this.filled = false;
      } else if (b !== 32 && b !== 9 && b !== 13) this.filled = true;
    }
    return { length: n };
  }

  end(): { length: number } {
    return { length: this.filled ? 1 : 0 };
  }
}
