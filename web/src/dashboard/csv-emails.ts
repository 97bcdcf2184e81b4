import { BATCH_MAX_ITEMS } from '@licensing/proto';

// The e-mails of a CSV pasted into the dashboard's bulk issuance form: one licence per row. Pure, so the
// rules are unit tested (web/test/unit/dashboard-csv-emails.test.ts); the licence service checks each
// address again (and names the item), the form maps that back to the row.

/** The most rows one batch takes. */
export const CSV_MAX_ROWS = BATCH_MAX_ITEMS;

const HEADERS = new Set(['email', 'e-mail', 'customer_email', 'customer e-mail', 'customer email']);

/** A cell without its surrounding spaces and double quotes ("" inside is one "). */
const cell = (raw: string) => {
  const t = raw.trim();
  return t.length >= 2 && t.startsWith('"') && t.endsWith('"') ? t.slice(1, -1).replace(/""/g, '"').trim() : t;
};

export interface CsvEmails {
  /** The e-mail of each data row, in order. */
  emails: string[];
  /** The line in the text of each of them (1-based), to name a refused one. */
  lines: number[];
}

/**
 * Reads the e-mail column of a CSV (comma or semicolon separated): the column headed email, e-mail or
 * customer_email when the first row is such a header, else the first column. Blank lines are skipped.
 * A problem (no rows, too many) is thrown as an Error whose message is for the person.
 */
export function emailsOfCsv(text: string): CsvEmails {
  const rows = text.split(/\r\n|\n|\r/).map((line, i) => ({ line: i + 1, cells: line.split(/[;,]/).map(cell) }));
  const filled = rows.filter((r) => r.cells.some((c) => c !== ''));
  let column = 0;
  const header = filled[0]?.cells.findIndex((c) => HEADERS.has(c.toLowerCase()));
  if (header !== undefined && header >= 0) {
    column = header;
    filled.shift();
  }
  if (!filled.length) throw new Error('Paste at least one e-mail address (one row per licence).');
  if (filled.length > CSV_MAX_ROWS)
    throw new Error(`At most ${CSV_MAX_ROWS} rows per batch (this has ${filled.length}); split it.`);
  return { emails: filled.map((r) => r.cells[column] ?? ''), lines: filled.map((r) => r.line) };
}
