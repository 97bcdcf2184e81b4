import type { Connection } from 'mongoose';
import { Pool, type QueryConfig } from 'pg';
import type { Logger } from '../../observability/logger';
import { outOfTime, readBudget } from '../../core/time-budget';
import { remainingMs } from '../../core/request-scope';
import { clearOutboxSql, pendingIdsSql, type Published } from './outbox-clear';
import { sqlWhere, textField } from './sql-filter';

// Newest-first pages and counts for FerretDB over PostgreSQL (see indexes.ts for
// why this folder exists). FerretDB 1.24 pushes only equalities down to SQL, then
// decodes, sorts and limits every matching document in its own process, so a page
// of an account with 100,000 licences decoded 100,000 documents. Here PostgreSQL
// itself answers "which ids come next" from a B-tree (the page indexes indexes.ts
// adds), and the page's documents are then read through FerretDB by _id, as ever.
// Against MongoDB nothing here is used: the declared indexes serve the plain query.

/** No page or count query may run longer than this (the gRPC deadline is 5 s). */
const STATEMENT_TIMEOUT_MS = 5000;

const quote = (id: string) => `"${id.replace(/"/g, '""')}"`;

interface Sql {
  text: string;
  params: unknown[];
}

/** The ids of a newest-first page: served by a page index (indexes.ts) when the filter's equalities lead it. */
export function pageSql(schema: string, table: string, filter: Record<string, unknown>, limit: number): Sql | null {
  const params: unknown[] = [];
  const where = sqlWhere(filter, params);
  if (where === null) return null;
  params.push(limit);
  return {
    text: `SELECT _jsonb->>'_id' AS id FROM ${quote(schema)}.${quote(table)} WHERE ${where} ORDER BY ${textField('_id')} DESC LIMIT $${params.length}`,
    params,
  };
}

export function countSql(schema: string, table: string, filter: Record<string, unknown>): Sql | null {
  const params: unknown[] = [];
  const where = sqlWhere(filter, params);
  if (where === null) return null;
  return { text: `SELECT count(*) AS n FROM ${quote(schema)}.${quote(table)} WHERE ${where}`, params };
}

/**
 * Which of these `_id`s a table holds: one statement on FerretDB's own unique B-tree over `_jsonb -> '_id'`
 * (FerretDB itself would send one `@>` per value, which that index cannot serve).
 */
export function idsAmongSql(schema: string, table: string, ids: string[]): Sql {
  return {
    text: `SELECT _jsonb->>'_id' AS id FROM ${quote(schema)}.${quote(table)} WHERE (_jsonb -> '_id') = ANY($1::jsonb[])`,
    params: [ids.map((id) => JSON.stringify(id))],
  };
}

/**
 * One string field of the documents of these `_id`s that a table holds: one statement on FerretDB's own
 * unique B-tree over `_jsonb -> '_id'`, as idsAmongSql.
 */
export function fieldAmongSql(schema: string, table: string, ids: string[], field: string): Sql {
  if (!FIELD.test(field)) throw new Error(`fieldAmongSql: not a plain field name: ${field}`);
  return {
    text: `SELECT _jsonb->>'_id' AS id, _jsonb->>'${field}' AS value FROM ${quote(schema)}.${quote(table)} WHERE (_jsonb -> '_id') = ANY($1::jsonb[])`,
    params: [ids.map((id) => JSON.stringify(id))],
  };
}

/**
 * Deletes up to `limit` documents whose date `field` is before `bound` (and that match `also`, a filter
 * sql-filter.ts translates), in one statement on the B-tree over `_jsonb -> field` (indexes.ts,
 * rangeFields): FerretDB itself passes no range down to SQL, so its deleteMany would decode every
 * document of the collection. A date is stored as a JSON number of milliseconds; the lower bound keeps
 * the comparison among numbers, which is what the index orders. Null when `also` is not translated.
 */
export function deleteBelowSql(
  schema: string,
  table: string,
  field: string,
  bound: Date,
  limit: number,
  also: Record<string, unknown> = {},
): Sql | null {
  if (!FIELD.test(field)) throw new Error(`deleteBelowSql: not a plain field name: ${field}`);
  const column = `(_jsonb -> '${field}')`;
  const t = `${quote(schema)}.${quote(table)}`;
  const params: unknown[] = [JSON.stringify(bound.getTime()), limit];
  const where = sqlWhere(also, params);
  if (where === null) return null;
  return {
    text: `DELETE FROM ${t} WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM ${t} WHERE ${column} >= '-1e300'::jsonb AND ${column} < $1::jsonb AND ${where} LIMIT $2))`,
    params,
  };
}

/** The field names the statements here accept (as sql-filter.ts): never quoted, so never anything else. */
const FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;

export class PostgresPages {
  private readonly tables = new Map<string, string>();

  constructor(
    private readonly pool: Pool,
    /** FerretDB keeps one schema per database, named after it. */
    private readonly schema: string,
  ) {}

  /** FerretDB's table for a collection, from its metadata (looked up again while the collection does not exist yet). */
  async tableOf(collection: string): Promise<string | undefined> {
    const known = this.tables.get(collection);
    if (known) return known;
    const res = await this.pool.query<{ tbl: string }>(
      `SELECT _jsonb->>'table' AS tbl FROM ${quote(this.schema)}._ferretdb_database_metadata WHERE _jsonb->>'_id' = $1`,
      [collection],
    );
    const table = res.rows[0]?.tbl;
    if (table) this.tables.set(collection, table);
    return table;
  }

  private async query<R extends Record<string, unknown>>(text: string, params: unknown[]): Promise<R[]> {
    // Bounded by the caller's deadline, like every MongoDB read (store/query-deadline.ts); the server's
    // statement_timeout (set on the pool) stops the statement itself.
    const budget = readBudget(STATEMENT_TIMEOUT_MS, remainingMs());
    try {
      // query_timeout per query is honoured by pg's client, though its types leave it out.
      const config = { text, values: params, query_timeout: budget } as QueryConfig;
      return (await this.pool.query<R>(config)).rows;
    } catch (err) {
      const e = err as { code?: string; message?: string };
      if (e.code === '57014' || /timeout/i.test(e.message ?? '')) throw outOfTime();
      throw err;
    }
  }

  /**
   * The ids of the first `limit` documents matching `filter`, newest (greatest _id)
   * first; null when the filter has something sql-filter.ts does not translate.
   */
  async newestIds(collection: string, filter: Record<string, unknown>, limit: number): Promise<string[] | null> {
    const table = await this.tableOf(collection);
    const sql = pageSql(this.schema, table ?? '', filter, limit);
    if (!sql) return null;
    if (!table) return []; // no such collection yet
    return (await this.query<{ id: string }>(sql.text, sql.params)).map((r) => r.id);
  }

  /** How many documents match; null when the filter is not translated. */
  async count(collection: string, filter: Record<string, unknown>): Promise<number | null> {
    const table = await this.tableOf(collection);
    const sql = countSql(this.schema, table ?? '', filter);
    if (!sql) return null;
    if (!table) return 0;
    return Number((await this.query<{ n: string }>(sql.text, sql.params))[0].n);
  }

  /** The ids among these that the collection holds (string `_id`s), in one statement; any order. */
  async idsAmong(collection: string, ids: string[]): Promise<string[]> {
    if (!ids.length) return [];
    const table = await this.tableOf(collection);
    if (!table) return []; // no such collection yet
    const sql = idsAmongSql(this.schema, table, ids);
    return (await this.query<{ id: string }>(sql.text, sql.params)).map((r) => r.id);
  }

  /** One string field of the documents of these ids, by id (absent ids left out), in one statement. */
  async fieldAmong(collection: string, ids: string[], field: string): Promise<Map<string, string | null>> {
    if (!ids.length) return new Map();
    const table = await this.tableOf(collection);
    if (!table) return new Map(); // no such collection yet
    const sql = fieldAmongSql(this.schema, table, ids, field);
    const rows = await this.query<{ id: string; value: string | null }>(sql.text, sql.params);
    return new Map(rows.map((r) => [r.id, r.value]));
  }

  /**
   * Deletes up to `limit` documents whose date `field` is before `bound` and that match `also`
   * (deleteBelowSql); how many went, or null when `also` is not translated.
   */
  async deleteBelow(
    collection: string,
    field: string,
    bound: Date,
    limit: number,
    also: Record<string, unknown> = {},
  ): Promise<number | null> {
    const table = await this.tableOf(collection);
    const sql = deleteBelowSql(this.schema, table ?? '', field, bound, limit, also);
    if (!sql) return null;
    if (!table) return 0;
    const res = await this.pool.query({ text: sql.text, values: sql.params });
    return res.rowCount ?? 0;
  }

  /**
   * Clears published events from a batch of documents in one atomic statement (outbox-clear.ts):
   * answers the ids it cleared; a document that holds other events too is left for a later pass.
   */
  async clearOutboxes(collection: string, docs: Published[]): Promise<Set<string>> {
    const table = await this.tableOf(collection);
    if (!table || docs.length === 0) return new Set();
    const sql = clearOutboxSql(this.schema, table, docs);
    const res = await this.pool.query<{ id: string }>({ text: sql.text, values: sql.params });
    return new Set(res.rows.map((r) => r.id));
  }

  /** The ids of up to `limit` documents with pending events after `after`, in byte order (the relay's scan). */
  async pendingIds(collection: string, after: string, limit: number): Promise<string[]> {
    const table = await this.tableOf(collection);
    if (!table) return [];
    const sql = pendingIdsSql(this.schema, table, after, limit);
    return (await this.pool.query<{ id: string }>({ text: sql.text, values: sql.params })).rows.map((r) => r.id);
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

const registry = new WeakMap<Connection, PostgresPages>();

/** From now on, pages and counts on this connection's models ask PostgreSQL for their ids (service start-up). */
export function usePostgresPages(conn: Connection, postgresUrl: string, log: Logger): PostgresPages {
  const pool = new Pool({
    connectionString: postgresUrl,
    max: 4,
    idleTimeoutMillis: 30_000,
    statement_timeout: STATEMENT_TIMEOUT_MS,
  });
  pool.on('error', (err) => log.warn({ err: err.message }, 'PostgreSQL page connection failed'));
  const pages = new PostgresPages(pool, conn.name);
  registry.set(conn, pages);
  return pages;
}

export function postgresPagesOf(conn: Connection): PostgresPages | undefined {
  return registry.get(conn);
}
