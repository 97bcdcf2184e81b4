import { createHash } from 'node:crypto';
import type { Connection } from 'mongoose';
import { Client } from 'pg';
import type { Logger } from '../../observability/logger';
import { jsonbField, textField } from './sql-filter';
import { pendingIndexSql } from './outbox-clear';

// The one place that makes FerretDB over PostgreSQL use indexes (docs/operations.md, "The store"):
// this folder. Here, the indexes; in pages.ts, the newest-first pages and counts that use them.
//
// FerretDB 1.24 turns each top-level equality of a filter into
// `_jsonb -> 'field' @> value`. The B-tree indexes it creates for our declared
// MongoDB indexes cannot serve `@>`; a GIN index on the same expression can, when
// PostgreSQL plans each statement with its parameters (plan_cache_mode =
// force_custom_plan, set on the database by the scripts that create it). So for
// every field of every declared index this adds such a GIN index. It runs only
// when FERRETDB_POSTGRESQL_URL is set, i.e. for the project's own FerretDB over
// PostgreSQL; against MongoDB (compose, Kubernetes) the declared indexes serve
// and this does nothing. FerretDB still sorts in its own process, after the
// filter, so for every declared index that ends in _id (a newest-first list) this
// also adds a B-tree on the same fields, which pages.ts asks for a page's ids.

/** PostgreSQL names are at most 63 bytes: long ones keep a readable head and a hash. */
function indexName(table: string, field: string, kind = 'gin'): string {
  const name = `${table}_${field.replace(/\W/g, '_')}_${kind}`;
  return name.length <= 63
    ? name
    : `${name.slice(0, 50)}_${createHash('sha256').update(name).digest('hex').slice(0, 12)}`;
}

const quote = (id: string) => `"${id.replace(/"/g, '""')}"`;

/**
 * The fields of a model's declared indexes, in first-seen order, and _id: FerretDB's own
 * unique index on _id is a B-tree too, so a look-up by _id would otherwise scan
 * (measured: 45–54 ms at 100,000 licences).
 */
export function indexedFields(indexes: [Record<string, unknown>, unknown][]): string[] {
  const fields = new Set<string>(['_id']);
  for (const [keys] of indexes) for (const field of Object.keys(keys)) fields.add(field);
  return [...fields];
}

/**
 * FerretDB's own index for a declared MongoDB index is a B-tree over `_jsonb -> 'field'`, and
 * FerretDB 1.24 never sends a query it could serve (equalities go as `@>`, sorts and ranges stay
 * in FerretDB), so each one is only a cost on every write. A unique index still enforces its
 * constraint, which the code relies on; the others are left out over PostgreSQL (syncIndexes),
 * where the GIN and page indexes below serve instead. MongoDB gets every declared index.
 */
export const unusedByFerretdb = (options: Record<string, unknown>): boolean => options.unique !== true;

/** The declared newest-first list indexes (ending with `_id: -1`, e.g. account_id, _id): their fields. */
export function pageIndexes(indexes: [Record<string, unknown>, unknown][]): string[][] {
  const found = new Map<string, string[]>();
  for (const [keys] of indexes) {
    const fields = Object.keys(keys);
    const newestFirst = fields.length > 1 && fields[fields.length - 1] === '_id' && Number(keys._id) < 0;
    if (newestFirst && fields.every((f) => /^[A-Za-z_]\w*$/.test(f))) found.set(fields.join(','), fields);
  }
  return [...found.values()];
}

/**
 * The fields of the declared single-field indexes that are not unique (the TTL indexes among them): such
 * an index is declared for a range or an order on its field (an equality has its GIN index), e.g. the
 * expired documents a clean-up deletes. Each gets a B-tree over `_jsonb -> 'field'`, which
 * pages.ts's deleteBelow compares with `<` (FerretDB itself passes no range down to SQL).
 */
export function rangeFields(indexes: [Record<string, unknown>, unknown][]): string[] {
  const found = new Set<string>();
  for (const [keys, options] of indexes) {
    const fields = Object.keys(keys);
    const unique = (options as { unique?: boolean } | undefined)?.unique === true;
    if (fields.length === 1 && !unique && /^[A-Za-z_]\w*$/.test(fields[0])) found.add(fields[0]);
  }
  return [...found];
}

/** CREATE INDEX IF NOT EXISTS, tolerating another instance creating the same index at the same moment. */
async function createIndex(pg: Client, sql: string): Promise<void> {
  try {
    await pg.query(sql);
  } catch (err) {
    // IF NOT EXISTS is not safe against a concurrent CREATE of the same name; the other one made it.
    if (!['23505', '42P07'].includes((err as { code?: string }).code ?? '')) throw err;
  }
}

export async function addPostgresIndexes(conn: Connection, postgresUrl: string, log: Logger): Promise<void> {
  const pg = new Client({ connectionString: postgresUrl });
  await pg.connect();
  try {
    // FerretDB keeps one schema per database, named after it, and maps collections to tables in its metadata.
    const schema = conn.name;
    const found = await pg.query<{ exists: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM information_schema.schemata WHERE schema_name = $1) AS exists',
      [schema],
    );
    if (!found.rows[0].exists) {
      log.warn({ schema }, 'no FerretDB schema for this database in PostgreSQL: GIN indexes not added');
      return;
    }
    const tables = await pg.query<{ collection: string; tbl: string }>(
      `SELECT _jsonb->>'_id' AS collection, _jsonb->>'table' AS tbl FROM ${quote(schema)}._ferretdb_database_metadata`,
    );
    const tableOf = new Map(tables.rows.map((r) => [r.collection, r.tbl]));
    let added = 0;
    for (const model of Object.values(conn.models)) {
      const table = tableOf.get(model.collection.collectionName);
      if (!table) continue;
      const declared = model.schema.indexes() as [Record<string, unknown>, unknown][];
      for (const field of indexedFields(declared)) {
        await createIndex(
          pg,
          `CREATE INDEX IF NOT EXISTS ${quote(indexName(table, field))} ON ${quote(schema)}.${quote(table)} USING gin ((_jsonb -> '${field.replace(/'/g, "''")}'))`,
        );
        added++;
      }
      // The outbox relay's scan (outbox-clear.ts): a model that declares the outbox's index gets its partial index.
      if (declared.some(([keys]) => 'outbox_pending' in keys)) {
        await createIndex(pg, pendingIndexSql(schema, table, indexName(table, 'outbox_pending', 'pending')));
        added++;
      }
      for (const field of rangeFields(declared)) {
        await createIndex(
          pg,
          `CREATE INDEX IF NOT EXISTS ${quote(indexName(table, field, 'range'))} ON ${quote(schema)}.${quote(table)} ((_jsonb -> '${field}'))`,
        );
        added++;
      }
      for (const fields of pageIndexes(declared)) {
        const columns = fields.map((f) => (f === '_id' ? textField(f) : jsonbField(f))).join(', ');
        await createIndex(
          pg,
          `CREATE INDEX IF NOT EXISTS ${quote(indexName(table, fields.join('_'), 'page'))} ON ${quote(schema)}.${quote(table)} (${columns})`,
        );
        added++;
      }
    }
    log.debug({ schema, indexes: added }, 'GIN indexes for FerretDB over PostgreSQL in place');
  } finally {
    await pg.end();
  }
}
