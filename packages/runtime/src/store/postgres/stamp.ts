import { Client } from 'pg';

// A field added to the documents that lack it, for FerretDB over PostgreSQL (the migrations'
// schema_version stamp, runtime/store/migrations.ts). FerretDB 1.x applies an update as
// read-modify-write of the whole document without isolation, so an updateMany sent through it while
// the services write could put back a document it read over a change made meanwhile (a revocation,
// say). One UPDATE statement per batch instead: PostgreSQL locks each row and applies the change to
// the row as it is then. The field's value and its entry in FerretDB's schema header (`$s`: the
// type under `p`, the key order under `$k`) are added together.

const quote = (id: string) => `"${id.replace(/"/g, '""')}"`;

/** The tables of a FerretDB database (its PostgreSQL schema), by collection name. */
export async function ferretTables(pg: Client, schema: string): Promise<Map<string, string>> {
  const found = await pg.query<{ exists: boolean }>(
    'SELECT EXISTS (SELECT 1 FROM information_schema.schemata WHERE schema_name = $1) AS exists',
    [schema],
  );
  if (!found.rows[0].exists) return new Map();
  const tables = await pg.query<{ collection: string; tbl: string }>(
    `SELECT _jsonb->>'_id' AS collection, _jsonb->>'table' AS tbl FROM ${quote(schema)}._ferretdb_database_metadata`,
  );
  return new Map(tables.rows.map((r) => [r.collection, r.tbl]));
}

/** Sets `field` to `value` (an int32 or a string) on up to `batch` documents without it. */
export function stampSql(schema: string, table: string, field: string, value: number | string, batch: number) {
  const [cast, type] = typeof value === 'number' ? ['int', 'int'] : ['text', 'string'];
  if (typeof value === 'number' && !Number.isInteger(value)) throw new Error('stampSql: an integer or a string');
  return {
    text: `UPDATE ${quote(schema)}.${quote(table)} SET _jsonb = jsonb_set(
        jsonb_set(jsonb_set(_jsonb, ARRAY[$1::text], to_jsonb($2::${cast})), ARRAY['$s', 'p', $1::text], '{"t":"${type}"}'::jsonb),
        '{$s,$k}', (_jsonb->'$s'->'$k') || to_jsonb(ARRAY[$1::text]))
      WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${quote(schema)}.${quote(table)} WHERE NOT (_jsonb ? $1::text) LIMIT $3))
        AND NOT (_jsonb ? $1::text)`,
    params: [field, value, batch],
  };
}

/** Stamps every document of these collections that lacks `field`, in batches; answers how many. */
export async function stampWithPostgres(
  postgresUrl: string,
  schema: string,
  collections: string[],
  field: string,
  value: number | string,
  progress: (n: number) => void,
): Promise<number> {
  const pg = new Client({ connectionString: postgresUrl });
  await pg.connect();
  let changed = 0;
  try {
    const tables = await ferretTables(pg, schema);
    for (const c of collections) {
      const table = tables.get(c);
      if (!table) continue;
      for (;;) {
        const sql = stampSql(schema, table, field, value, 500);
        const r = await pg.query(sql.text, sql.params);
        changed += r.rowCount ?? 0;
        if (!r.rowCount) break;
        progress(changed);
      }
    }
  } finally {
    await pg.end();
  }
  return changed;
}
