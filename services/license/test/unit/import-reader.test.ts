import {
  checkHead,
  ImportFileError,
  ImportFileReader,
  MAX_HEADER_COLUMNS,
  type FileRow,
} from '../../src/transfer/domain/import-formats';
import { checkRow } from '../../src/transfer/domain/import-rows';
import { Breather, fileRows, ROWS_PER_TURN, SLICE_BYTES } from '../../src/transfer/use-cases/import-pacing';

// How an import's CSV is read: a header wider than the bound is refused before anything else; the
// columns read are chosen once per header, so a row costs the same whatever the unused columns; and a
// big file is read in short turns of the event loop, so other calls of the service keep being answered.

const bytes = (text: string) => Buffer.from(text);
const headerOf = (n: number, first = 'key,product_id,customer_email') =>
  [first, ...Array.from({ length: n - 3 }, (_, i) => `col${i}`)].join(',');

function readAll(reader: ImportFileReader, text: string): FileRow[] {
  return [...reader.push(bytes(text)), ...reader.end()];
}

describe('the width of a CSV header', () => {
  it('a 36,000-column header is refused as a whole file, naming the bound', () => {
    const head = `${headerOf(36_000)}\nk-00000001,prod_1,a@example.com\n`;
    expect(checkHead('csv', bytes(head))).toBe(
      `not a csv file: the header has more than ${MAX_HEADER_COLUMNS} columns (at most ${MAX_HEADER_COLUMNS})`,
    );
    expect(() => readAll(new ImportFileReader('csv'), head)).toThrow(ImportFileError);
  });

  it('refuses it as soon as it gets too wide, whichever format', () => {
    for (const format of ['keygen', 'lemonsqueezy', 'gumroad'] as const)
      expect(checkHead(format, bytes(`${'x,'.repeat(MAX_HEADER_COLUMNS)}x\n`))).toMatch(/more than 256 columns/);
  });

  it('takes a header of exactly 256 columns', () => {
    const head = `${headerOf(MAX_HEADER_COLUMNS)}\nk-00000001,prod_1,a@example.com\n`;
    expect(checkHead('csv', bytes(head))).toBeUndefined();
    expect(readAll(new ImportFileReader('csv'), head)).toEqual([
      { row: 1, fields: { key: 'k-00000001', product_id: 'prod_1', customer_email: 'a@example.com' } },
    ]);
  });

  it('the check of a first piece reads its header only, never its rows', () => {
    const reader = new ImportFileReader('csv', true);
    const rows = reader.push(bytes(`key,product_id,customer_email\n${'k-1,prod_1,a@example.com\n'.repeat(1000)}`));
    expect(rows).toEqual([]);
    expect(reader.headerRead).toBe(true);
    expect(reader.columnsVisited).toBe(0);
  });
});

describe('the columns a row is read by', () => {
  const rows = Array.from({ length: 500 }, (_, i) => `k-${String(i).padStart(8, '0')},prod_1,c${i}@example.com`);

  it('costs the same per row with 3 columns in the header or 253 more nobody reads', () => {
    const narrow = new ImportFileReader('csv');
    const wide = new ImportFileReader('csv');
    const narrowRows = readAll(narrow, `${headerOf(3)}\n${rows.join('\n')}\n`);
    const wideRows = readAll(wide, `${headerOf(MAX_HEADER_COLUMNS)}\n${rows.join('\n')}\n`);
    expect(wideRows).toEqual(narrowRows);
    expect(narrowRows).toHaveLength(500);
    // The work of mapping rows: the columns looked at, all rows together.
    expect(wide.columnsVisited).toBe(narrow.columnsVisited);
    expect(narrow.columnsVisited).toBeLessThanOrEqual(500 * 3 + 3);
  });

  it('still reads metadata.<name> columns and the first of two columns of one name', () => {
    const reader = new ImportFileReader('csv');
    const read = readAll(
      reader,
      'key,product_id,customer_email,unused,metadata.plan,Key\nk-00000001,prod_1,a@example.com,x,gold,other\n',
    );
    expect(read).toEqual([
      {
        row: 1,
        fields: {
          key: 'k-00000001',
          product_id: 'prod_1',
          customer_email: 'a@example.com',
          metadata: { plan: 'gold' },
        },
      },
    ]);
  });

  it('a row with text only in a column nobody reads is a row, not a blank line', () => {
    const read = readAll(new ImportFileReader('csv'), 'note,key,product_id,customer_email\nhello\n\n,k-00000002\n');
    expect(read.map((r) => r.row)).toEqual([1, 2]);
    expect(read[1]).toMatchObject({ fields: { key: 'k-00000002' } });
  });
});

describe('a big file, read in short turns', () => {
  /** Counts the turns the event loop gets (what every other call of the service waits for). */
  function ticker() {
    const t = { ticks: 0, stop: () => {} };
    let on = true;
    const tick = () => {
      t.ticks++;
      if (on) setImmediate(tick);
    };
    setImmediate(tick);
    t.stop = () => {
      on = false;
    };
    return t;
  }

  const piecesOf = (file: Buffer) =>
    Array.from({ length: Math.ceil(file.length / (1024 * 1024)) }, (_, s) =>
      file.subarray(s * 1024 * 1024, (s + 1) * 1024 * 1024),
    );

  async function readAndCheck(file: Buffer) {
    const pieces = piecesOf(file);
    const breather = new Breather();
    const loop = ticker();
    let read = 0;
    let rejected = 0;
    let sinceTick = 0;
    let mostBetweenTicks = 0;
    let lastTick = loop.ticks;
    const now = new Date();
    for await (const r of fileRows(
      'csv',
      pieces.length,
      async (seq) => pieces[seq],
      breather,
      (seq) => new Error(`piece ${seq} missing`),
    )) {
      if (loop.ticks !== lastTick) {
        lastTick = loop.ticks;
        sinceTick = 0;
      }
      read++;
      mostBetweenTicks = Math.max(mostBetweenTicks, ++sinceTick);
      // The job checks each row as it batches them, a turn every so many rows.
      if ('fields' in r && checkRow(r.fields, now).kind === 'rejected') rejected++;
      await breather.afterRow();
    }
    loop.stop();
    return { read, rejected, mostBetweenTicks, yields: breather.yields, ticks: loop.ticks };
  }

  it('gives the event loop a turn at least every 100 rows of hostile CSV', async () => {
    // A 256-column header, quoted cells with control characters and line breaks, long unused cells.
    const header = headerOf(MAX_HEADER_COLUMNS, 'key,product_name,customer_email');
    const row = (i: number) =>
      `k-${String(i).padStart(8, '0')},"Pro ""X""\u0007",c${i}@example.com,${'y'.repeat(200)},"a\nb\u0000"`;
    const lines = [header];
    for (let i = 0; i < 50_000; i++) lines.push(row(i));
    const got = await readAndCheck(bytes(`${lines.join('\n')}\n`));
    expect(got.read).toBe(50_000);
    expect(got.rejected).toBe(50_000); // the control character in product_name
    expect(got.mostBetweenTicks).toBeLessThanOrEqual(ROWS_PER_TURN);
    expect(got.ticks).toBeGreaterThanOrEqual(50_000 / ROWS_PER_TURN);
  });

  it('gives it a turn after every slice of a piece parsed, however few rows the slices hold', async () => {
    // Rows of 200 KiB, nearly all of it in a column nobody reads: a slice holds no whole row.
    const wideRow = (i: number) => `k-${String(i).padStart(8, '0')},prod_1,c${i}@example.com,${'z'.repeat(200 * 1024)}`;
    const lines = ['key,product_id,customer_email,notes'];
    for (let i = 0; i < 40; i++) lines.push(wideRow(i));
    const file = bytes(`${lines.join('\n')}\n`);
    const got = await readAndCheck(file);
    expect(got.read).toBe(40);
    expect(got.yields).toBeGreaterThanOrEqual(Math.floor(file.length / SLICE_BYTES));
  });
});
