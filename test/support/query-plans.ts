import { randomBytes } from 'node:crypto';
import mongoose, { type Connection, type Model } from 'mongoose';
import { Client } from 'pg';
import {
  addPostgresIndexes,
  createLogger,
  ferretTables,
  indexedFields,
  postgresPagesOf,
  rangeFields,
  syncIndexes,
  unusedByFerretdb,
  usePostgresPages,
} from '@licensing/runtime';

// What a store sends at size, over FerretDB and PostgreSQL: a collection of 100,000 documents cloned
// in SQL from the services' own documents, and every command a store method sends to FerretDB (seen
// by the driver's command monitoring) or statement it sends to PostgreSQL itself (postgres/pages.ts),
// explained. A plan that reads the whole collection is what makes a store slow as it grows: FerretDB
// decoding every document in its own process (filterPushdown false), or PostgreSQL scanning the table.

export const SIZE = 100_000;

/** Index builds run side by side while seeding. */
const INDEX_BUILDS_AT_ONCE = 3;

const quote = (id: string) => `"${id.replace(/"/g, '""')}"`;

/** One command or statement a store sent, with what its plan reads. */
export interface Sent {
  collection: string;
  what: string;
  /** Why its plan reads every document, or null when an index serves it. */
  readsAll: string | null;
}

/** Every node of a PostgreSQL plan (EXPLAIN FORMAT JSON's tree). */
function nodes(plan: Record<string, unknown>): Record<string, unknown>[] {
  const children = (plan.Plans as Record<string, unknown>[] | undefined) ?? [];
  return [plan, ...children.flatMap(nodes)];
}

function seqScanOf(plan: Record<string, unknown>, tables: Set<string>): string | null {
  const scan = nodes(plan).find((n) => n['Node Type'] === 'Seq Scan' && tables.has(String(n['Relation Name'])));
  return scan ? `a sequential scan of ${scan['Relation Name']}` : null;
}

/**
 * Copies of a collection's template documents in one INSERT … SELECT: FerretDB's own stored form (its
 * `$s` header unchanged), with every indexed string field given a suffix (so ids, keys and accounts
 * differ and only the templates match a test's values) and every indexed date moved on by a second
 * per copy. `copies` in all, spread over the templates.
 */
export async function cloneInPostgres(
  postgresUrl: string,
  schema: string,
  table: string,
  model: Model<any>,
  docs: Record<string, unknown>[],
  copies: number,
): Promise<void> {
  const declared = model.schema.indexes() as [Record<string, unknown>, unknown][];
  const fields = new Set([...indexedFields(declared), ...rangeFields(declared)]);
  // Each field's kind is read from the templates here, once, not per copy in SQL.
  const changed = [...fields].flatMap((f) => {
    if (docs.every((d) => typeof d[f] === 'string')) return [`'${f}', to_jsonb((_jsonb ->> '${f}') || '~' || g)`];
    if (docs.every((d) => d[f] instanceof Date)) return [`'${f}', to_jsonb((_jsonb -> '${f}')::numeric + g * 1000)`];
    return [];
  });
  const t = `${quote(schema)}.${quote(table)}`;
  const c = new Client({ connectionString: postgresUrl });
  await c.connect();
  try {
    await c.query('SET synchronous_commit = off');
    // A copy for one test run needs no crash safety: unlogged, the load and the index builds write no WAL
    // (the planner plans an unlogged table as any other).
    await c.query(`ALTER TABLE ${t} SET UNLOGGED`);
    await c.query(
      `INSERT INTO ${t} (_jsonb) SELECT _jsonb || jsonb_build_object(${changed.join(', ')})
        FROM ${t}, generate_series(1, $1::int) g`,
      [Math.ceil(copies / docs.length)],
    );
  } finally {
    await c.end();
  }
}

/** A service's database at size: its models, seeded collections, and what its stores send. */
export class StoreAtSize {
  readonly pg: Client;
  private readonly sent: { collection: string; command: string; body: Record<string, unknown> }[] = [];
  private statements: { text: string; values: unknown[] }[] = [];
  /** Seeded collection → its PostgreSQL table. */
  private readonly seeded = new Map<string, string>();

  private constructor(
    readonly conn: Connection,
    postgresUrl: string,
  ) {
    this.pg = new Client({ connectionString: postgresUrl });
  }

  /**
   * A fresh database with the services' models (`define`), each of `seeds`' collections holding its
   * template documents (written through the models, as the service writes them) and clones of them up to
   * SIZE, then the indexes the services make at start-up (built after the load, as after an import).
   * Everything is seeded once, in one database, its tables unlogged: the loads run side by side, and each
   * collection's indexes are built as soon as it is loaded, a few collections at a time (a build waits on
   * its disk as much as on a core).
   */
  static async open<M>(
    postgresUrl: string,
    define: (conn: Connection) => M,
    seeds: (models: M) => { model: Model<any>; docs: object[] }[],
  ): Promise<{ store: StoreAtSize; models: M }> {
    const conn = mongoose.createConnection(process.env.TEST_MONGO_URL!, {
      dbName: `t_plans_${randomBytes(3).toString('hex')}`,
      autoIndex: false,
      autoCreate: false,
      bufferCommands: false,
      monitorCommands: true,
    });
    await conn.asPromise();
    const store = new StoreAtSize(conn, postgresUrl);
    await store.pg.connect();
    const models = define(conn);
    const plan = seeds(models);
    // One at a time: the first write creates the database (its schema and metadata), not atomically.
    for (const { model, docs } of plan) await model.insertMany(docs);
    const tables = await ferretTables(store.pg, conn.name);
    // The services' own index steps, given the memory a bulk index build wants (each index is built at
    // once), for the seeded collections (the others are empty, and no case reads them).
    const building = new URL(postgresUrl);
    building.searchParams.set('options', '-c maintenance_work_mem=128MB');
    // At most INDEX_BUILDS_AT_ONCE models' builds at a time: a finished one hands its turn to the next waiting.
    let busy = 0;
    const waiting: (() => void)[] = [];
    const buildIndexes = async (model: Model<any>) => {
      if (busy < INDEX_BUILDS_AT_ONCE) busy++;
      else await new Promise<void>((go) => waiting.push(go));
      try {
        // The connection as those steps read it: its database's name and this one model.
        const one = { name: conn.name, models: { [model.modelName]: model } } as unknown as Connection;
        await syncIndexes(one, unusedByFerretdb);
        await addPostgresIndexes(one, building.toString(), createLogger('test', 'silent'));
      } finally {
        const next = waiting.shift();
        if (next) next();
        else busy--;
      }
    };
    // Each collection's load, then its index builds as soon as it is loaded (a few at a time).
    await Promise.all(
      plan.map(async ({ model, docs }) => {
        const table = tables.get(model.collection.collectionName)!;
        store.seeded.set(model.collection.collectionName, table);
        await cloneInPostgres(
          postgresUrl,
          conn.name,
          table,
          model,
          docs as Record<string, unknown>[],
          SIZE - docs.length,
        );
        await buildIndexes(model);
      }),
    );
    // Planner statistics from a smaller sample than the default (enough for the plans asked about
    // here), for every seeded table in one statement.
    await store.pg.query('SET default_statistics_target = 10');
    await store.pg.query(
      `ANALYZE ${[...store.seeded.values()].map((t) => `${quote(conn.name)}.${quote(t)}`).join(', ')}`,
    );
    const pages = usePostgresPages(conn, postgresUrl, createLogger('test', 'silent'));
    // The statements pages.ts sends, as they are sent.
    const pool = (pages as unknown as { pool: { query: (config: unknown, values?: unknown[]) => unknown } }).pool;
    const query = pool.query.bind(pool);
    pool.query = (config: unknown, values?: unknown[]) => {
      const c =
        typeof config === 'string' ? { text: config, values } : (config as { text: string; values?: unknown[] });
      store.statements.push({ text: c.text, values: c.values ?? [] });
      return query(config, values);
    };
    conn.getClient().on('commandStarted', (e) => {
      if (e.databaseName !== conn.name) return;
      const collection = e.command[e.commandName];
      if (typeof collection === 'string') store.sent.push({ collection, command: e.commandName, body: e.command });
    });
    return { store, models };
  }

  /** Runs `work` and answers what it sent to the seeded collections, each with what its plan reads. */
  async plansOf(work: () => Promise<unknown>): Promise<Sent[]> {
    this.sent.length = 0;
    this.statements = [];
    await work();
    const out: Sent[] = [];
    for (const s of [...this.sent]) {
      if (!this.seeded.has(s.collection)) continue;
      for (const explained of await this.explainCommand(s.collection, s.command, s.body)) out.push(explained);
    }
    for (const st of this.statements) {
      const table = [...this.seeded].find(([, t]) => st.text.includes(quote(t)));
      if (!table || /^\s*(SELECT _jsonb->>'table')/.test(st.text)) continue;
      const res = await this.pg.query(`EXPLAIN (FORMAT JSON) ${st.text}`, st.values);
      const plan = (res.rows[0]['QUERY PLAN'] as { Plan: Record<string, unknown> }[])[0].Plan;
      out.push({
        collection: table[0],
        what: `SQL ${st.text.replace(/\s+/g, ' ').slice(0, 120)}`,
        readsAll: seqScanOf(plan, new Set([table[1]])),
      });
    }
    return out;
  }

  /** The filters of a command, each explained as the find FerretDB runs for it (its updates and deletes read the same way). */
  private async explainCommand(collection: string, command: string, body: Record<string, unknown>): Promise<Sent[]> {
    const reads: { filter: unknown; sort?: unknown }[] = [];
    if (command === 'find') reads.push({ filter: body.filter ?? {}, sort: body.sort });
    else if (command === 'count') reads.push({ filter: body.query ?? {} });
    else if (command === 'findAndModify') reads.push({ filter: body.query ?? {}, sort: body.sort });
    else if (command === 'update') for (const u of body.updates as { q: unknown }[]) reads.push({ filter: u.q });
    else if (command === 'delete') for (const d of body.deletes as { q: unknown }[]) reads.push({ filter: d.q });
    else if (command === 'aggregate') {
      const first = (body.pipeline as Record<string, unknown>[])[0];
      reads.push({ filter: first?.$match ?? {} });
    } else return []; // inserts, getMore, index commands: no read
    const out: Sent[] = [];
    const table = this.seeded.get(collection)!;
    for (const r of reads) {
      const find: Record<string, unknown> = { find: collection, filter: r.filter };
      if (r.sort) find.sort = r.sort;
      const explained = await this.conn.db!.command({ explain: find });
      const plan = (explained.queryPlanner as { Plan: Record<string, unknown> }).Plan;
      const readsAll = !explained.filterPushdown
        ? 'FerretDB passes none of its filter down to PostgreSQL'
        : seqScanOf(plan, new Set([table]));
      out.push({ collection, what: `${command} ${JSON.stringify(r.filter)}`, readsAll });
    }
    return out;
  }

  async close(): Promise<void> {
    await postgresPagesOf(this.conn)?.close();
    await this.conn.dropDatabase();
    await this.conn.close();
    await this.pg.end();
  }
}
