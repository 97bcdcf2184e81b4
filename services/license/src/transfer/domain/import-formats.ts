import { StringDecoder } from 'node:string_decoder';
import { accountLimits } from '@licensing/proto';
import type { ImportFormat } from './import-rows';
import { columnName, ImportFileError, mappers } from './import-mappers';

// Reading an import file a piece at a time (never whole): jsonl lines or CSV records (RFC 4180: quoted
// fields, "" inside quotes, CRLF or LF), and each format's columns mapped to the jsonl field names
// (import-mappers.ts). Pure: the job feeds it the stored pieces in order.

/** A row is at most this long (a line of jsonl, a record of CSV). */
export const MAX_ROW_BYTES = 256 * 1024;

export { ImportFileError };

/** One data row: its number (from 1) and its fields under the jsonl names, or the reason it cannot be read. */
export type FileRow = { row: number; fields: Record<string, unknown> } | { row: number; error: string };

/** A CSV header has at most this many columns (a wider one is refused: 400 `body`). */
export const MAX_HEADER_COLUMNS = accountLimits.import_header_columns;

/** Reads a file of one format a piece at a time, and hands out its data rows, numbered from 1. */
export class ImportFileReader {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private row = 0;
  private header: string[] | undefined;
  /**
   * What each header column is read as: its name when the format reads it (the first column of a
   * name wins), else undefined: a column nobody reads is skipped character by character, never copied,
   * so a row costs the same whatever the number of unused columns.
   */
  private readAs: (string | undefined)[] = [];
  /** The columns read, each once: every row starts from these (the header's width does not count). */
  private readNames: string[] = [];
  private started = false;
  // CSV state across pieces: the record so far.
  private field = '';
  /** The column the current field is in, and the current record's fields by name (data rows) or in order (the header). */
  private column = 0;
  private named: Record<string, string> = {};
  private headerFields: string[] = [];
  private quoted = false;
  private afterQuote = false;
  private recordBytes = 0;
  private pendingQuote = false;
  /** The record has a character in a column not read (so it is no blank line). */
  private visible = false;
  /** Columns looked at while mapping rows, all rows together: what a row's mapping costs. */
  columnsVisited = 0;

  constructor(
    readonly format: ImportFormat,
    /** Stop at the end of the header (the check of a file's first piece reads nothing more). */
    private readonly headerOnly = false,
  ) {}

  /** The rows completed by this piece (a row cut by the piece's end waits for the next). */
  push(data: Uint8Array): FileRow[] {
    let text = this.decoder.write(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    if (!this.started) {
      text = text.replace(/^\uFEFF/, '');
      if (text) this.started = true;
    }
    return this.format === 'jsonl' ? this.jsonl(text, false) : this.csv(text, false);
  }

  /** The rows left at the end of the file. */
  end(): FileRow[] {
    const text = this.decoder.end();
    return this.format === 'jsonl' ? this.jsonl(text, true) : this.csv(text, true);
  }

  /** Whether a CSV file's header has been read whole. */
  get headerRead(): boolean {
    return this.header !== undefined;
  }

  private jsonl(text: string, last: boolean): FileRow[] {
    const out: FileRow[] = [];
    this.pending += text;
    let start = 0;
    for (;;) {
      const nl = this.pending.indexOf('\n', start);
      if (nl === -1) break;
      this.line(this.pending.slice(start, nl), out);
      start = nl + 1;
    }
    this.pending = this.pending.slice(start);
    if (this.pending.length > MAX_ROW_BYTES)
      throw new ImportFileError(`row ${this.row + 1} is longer than ${MAX_ROW_BYTES} bytes`);
    if (last && this.pending.trim()) {
      this.line(this.pending, out);
      this.pending = '';
    }
    return out;
  }

  private line(text: string, out: FileRow[]): void {
    const t = text.trim();
    if (!t) return;
    const row = ++this.row;
    let value: unknown;
    try {
      value = JSON.parse(t);
    } catch {
      // The first line decides whether this is jsonl at all (checkHead); later ones are bad rows.
      out.push({ row, error: 'not a JSON object on one line' });
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      out.push({ row, error: 'each line must be a JSON object' });
    else out.push({ row, fields: value as Record<string, unknown> });
  }

  /** Whether the current field's characters are kept: a header cell, or a data cell of a column read. */
  private keeps(): boolean {
    return !this.header || this.readAs[this.column] !== undefined;
  }

  private csv(text: string, last: boolean): FileRow[] {
    const out: FileRow[] = [];
    let keep = this.keeps();
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      this.recordBytes++;
      if (this.quoted) {
        if (c === '"') {
          if (text[i + 1] === '"') {
            if (keep) this.field += '"';
            i++;
          } else if (i + 1 === text.length && !last) {
            // A quote at the piece's end: whether it is "" is known with the next piece.
            this.pendingQuote = true;
            this.quoted = false;
            this.afterQuote = true;
          } else {
            this.quoted = false;
            this.afterQuote = true;
          }
        } else if (keep) this.field += c;
        else if (c.trim()) this.visible = true;
      } else if (this.pendingQuote && c === '"') {
        this.pendingQuote = false;
        this.quoted = true;
        this.afterQuote = false;
        if (keep) this.field += '"';
      } else {
        this.pendingQuote = false;
        if (c === '"' && this.field === '' && !this.afterQuote) this.quoted = true;
        else if (c === ',') {
          this.endField();
          keep = this.keeps();
        } else if (c === '\n') {
          this.endRecord(out);
          keep = this.keeps();
          if (this.headerOnly && this.header) return out;
        } else if (c === '\r') {
          // CRLF: the \n ends the record.
        } else if (keep) this.field += c;
        else if (c.trim()) this.visible = true;
      }
      if (this.recordBytes > MAX_ROW_BYTES)
        throw new ImportFileError(`row ${this.row + 1} is longer than ${MAX_ROW_BYTES} bytes`);
    }
    if (last) {
      if (this.quoted) throw new ImportFileError(`row ${this.row + 1}: a quoted field is never closed`);
      if (this.field !== '' || this.column > 0 || this.visible) this.endRecord(out);
    }
    return out;
  }

  private endField(): void {
    if (!this.header) {
      this.headerFields.push(this.field);
      // Refused as soon as it gets too wide: nothing of a wider header is read on.
      if (this.headerFields.length > MAX_HEADER_COLUMNS)
        throw new ImportFileError(
          `not a ${this.format} file: the header has more than ${MAX_HEADER_COLUMNS} columns (at most ${MAX_HEADER_COLUMNS})`,
        );
    } else {
      const name = this.readAs[this.column];
      if (name !== undefined) this.named[name] = this.field;
    }
    this.column++;
    this.field = '';
    this.afterQuote = false;
  }

  private endRecord(out: FileRow[]): void {
    const blank = this.column === 0 && this.field.trim() === '' && !this.visible;
    this.visible = false;
    this.endField();
    const width = this.column;
    const named = this.named;
    this.column = 0;
    this.recordBytes = 0;
    this.named = this.freshRecord();
    if (!this.header) {
      const fields = this.headerFields;
      this.headerFields = [];
      if (blank) return; // a blank line
      this.useHeader(fields);
      if (!this.headerOnly) this.named = this.freshRecord();
      return;
    }
    if (blank && width === 1) return; // a blank line
    const row = ++this.row;
    if (width > this.header.length) {
      out.push({ row, error: `${width} fields, but the header has ${this.header.length}` });
      return;
    }
    try {
      const mapped = mappers[this.format as Exclude<ImportFormat, 'jsonl'>].toFields(named);
      out.push(typeof mapped === 'string' ? { row, error: mapped } : { row, fields: stripUndefined(mapped) });
    } catch (err) {
      if (err instanceof ImportFileError) out.push({ row, error: err.message });
      else throw err;
    }
  }

  /** The header, checked, and which of its columns are read (each name once: the first column of it). */
  private useHeader(fields: string[]): void {
    const header = fields.map(columnName);
    const mapper = mappers[this.format as Exclude<ImportFormat, 'jsonl'>];
    const problem = mapper.header?.(header);
    if (problem) throw new ImportFileError(`not a ${this.format} file: ${problem}`);
    const known = new Set(mapper.columns);
    const taken = new Set<string>();
    this.readAs = header.map((h) => {
      if (!h || taken.has(h) || !(known.has(h) || h.startsWith('metadata_'))) return undefined;
      taken.add(h);
      return h;
    });
    this.readNames = [...taken];
    this.header = header;
  }

  /** A data row's fields before its cells: every column read, empty (a short row leaves the rest so). */
  private freshRecord(): Record<string, string> {
    const named: Record<string, string> = {};
    for (const n of this.readNames) named[n] = '';
    this.columnsVisited += this.readNames.length;
    return named;
  }
}

function stripUndefined(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * Whether a file's first piece is of the format at all, before anything is stored: a CSV format's header
 * names its required columns; a jsonl file's first line is a JSON object. Undefined when it is; the
 * problem otherwise (the upload is refused with 400).
 */
export function checkHead(format: ImportFormat, head: Uint8Array): string | undefined {
  const text = Buffer.from(head.buffer, head.byteOffset, head.byteLength)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  if (format === 'jsonl') {
    // The first line that holds anything (the piece is not split whole: only its head is read).
    let first: string | undefined;
    for (let at = 0; at < text.length; ) {
      const nl = text.indexOf('\n', at);
      const line = text.slice(at, nl === -1 ? text.length : nl);
      if (line.trim() !== '') {
        first = line;
        break;
      }
      if (nl === -1) break;
      at = nl + 1;
    }
    if (first === undefined) return 'the file is empty';
    const complete = text.indexOf('\n') !== -1 || head.byteLength < 65536;
    if (!complete) return undefined;
    try {
      const v = JSON.parse(first);
      if (typeof v !== 'object' || v === null || Array.isArray(v))
        return 'not a jsonl file: line 1 is not a JSON object';
    } catch {
      return 'not a jsonl file: line 1 is not JSON (send Content-Type: text/csv and a CSV format for CSV files)';
    }
    return undefined;
  }
  if (!text.trim()) return 'the file is empty';
  if (text.trimStart().startsWith('{')) return `not a ${format} file: it looks like jsonl (use format=jsonl)`;
  // The header only: the rows are read by the job, a batch at a time, never while a piece is received.
  const reader = new ImportFileReader(format, true);
  try {
    reader.push(head);
    // A header cut by the piece's end is checked when the job reads it.
  } catch (err) {
    if (err instanceof ImportFileError) return err.message;
    throw err;
  }
  return undefined;
}
