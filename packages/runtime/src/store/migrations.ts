import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Connection, Schema } from 'mongoose';
import type { Logger } from '../observability/logger';
import { stampWithPostgres } from './postgres/stamp';

// Upgrades of the stored data (docs/operations.md, "Upgrades"). Every document carries
// `schema_version`: the shape of its collection it was written in (schemaVersionPlugin gives new
// ones theirs). A service lists its migrations in order; the runner applies the ones not yet
// recorded in its database's `schema_migrations` collection, at start (before health says SERVING)
// or as a Job (`npm run admin -- migrate`). Each migration is idempotent, so one that is cut off
// half-way is simply run again, and written for a store that is in use: the previous release may
// still serve (a rolling upgrade) and must go on working with what the migration wrote.
//
// Several replicas starting at once run each migration once: FerretDB has no transactions and
// applies updates without isolation, so the lock is a unique insert (`_id: "lock"`) with a lease the
// holder renews; the others wait until every migration is recorded. A lock whose lease ran out (its
// holder died) is taken over by whoever inserts the one marker named after that holder's token.

export const SCHEMA_VERSION_FIELD = 'schema_version';
/** The version a collection's documents get unless its schema declares `schema_version` itself. */
export const FIRST_SCHEMA_VERSION = 1;
export const MIGRATIONS_COLLECTION = 'schema_migrations';

export interface Migration {
  /** Ordered, never renamed: `0001-schema-version`, `0002-…`. */
  id: string;
  /** What it does, for the log and the operator CLI. */
  description: string;
  /** Idempotent; reports progress through `progress` (documents changed so far). */
  up(ctx: MigrationContext): Promise<void>;
}

export interface MigrationContext {
  db: Connection;
  log: Logger;
  /** FerretDB over PostgreSQL: the URL, for the atomic SQL paths (runtime/store/postgres); else empty. */
  ferretdbPostgresUrl: string;
  progress(changed: number): void;
}

export interface MigrationOptions {
  log: Logger;
  ferretdbPostgresUrl?: string;
  /** The lock's lease (default 30 s), renewed every third of it. */
  leaseMs?: number;
  /** How often a replica that does not hold the lock looks again (default 500 ms). */
  pollMs?: number;
  signal?: AbortSignal;
  /** Progress of the migration being applied here (the operator CLI prints it). */
  onProgress?: (line: { migration: string; changed: number }) => void;
}

export interface MigrationReport {
  /** The migrations this process applied (others may have been applied by another replica). */
  applied: string[];
  /** Every migration of the list, now recorded. */
  recorded: string[];
}

interface LockDoc {
  _id: string;
  owner: string;
  expires_at: Date;
  host: string;
}

const DUPLICATE_KEY = 11000;
const isDuplicate = (err: unknown) => (err as { code?: number }).code === DUPLICATE_KEY;
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });

/** Checks a list before anything runs: ids unique and in order. */
export function checkMigrations(migrations: readonly Migration[]): void {
  const ids = migrations.map((m) => m.id);
  for (let i = 1; i < ids.length; i++)
    if (!(ids[i - 1] < ids[i])) throw new Error(`migrations out of order or repeated: ${ids[i - 1]}, ${ids[i]}`);
}

/** The ids recorded as applied in this database. */
export async function appliedMigrations(db: Connection): Promise<Set<string>> {
  const docs = await db
    .collection(MIGRATIONS_COLLECTION)
    .find({ _id: { $regex: '^m:' } } as never)
    .project({ _id: 1 })
    .toArray();
  return new Set(docs.map((d) => String(d._id).slice(2)));
}

/**
 * Applies the migrations not yet recorded, each once across every replica, and answers when all of
 * them are recorded (by this process or another).
 */
export async function runMigrations(
  db: Connection,
  migrations: readonly Migration[],
  opts: MigrationOptions,
): Promise<MigrationReport> {
  checkMigrations(migrations);
  const leaseMs = opts.leaseMs ?? 30_000;
  const pollMs = opts.pollMs ?? 500;
  const coll = db.collection(MIGRATIONS_COLLECTION);
  const owner = randomBytes(12).toString('hex');
  const appliedHere: string[] = [];
  const pending = async () => {
    const done = await appliedMigrations(db);
    return migrations.filter((m) => !done.has(m.id));
  };
  let waitingLogged = false;
  for (;;) {
    if (opts.signal?.aborted) throw new Error('stopped while waiting for the migrations');
    const todo = await pending();
    if (!todo.length) return { applied: appliedHere, recorded: migrations.map((m) => m.id) };
    if (await acquire(coll, owner, leaseMs)) {
      try {
        await applyHolding();
      } finally {
        await coll.deleteOne({ _id: 'lock', owner } as never).catch(() => undefined);
      }
      continue;
    }
    if (!waitingLogged) {
      opts.log.info({ pending: todo.map((m) => m.id) }, 'another replica is migrating the store: waiting');
      waitingLogged = true;
    }
    await sleep(pollMs, opts.signal);
  }

  /** With the lock held: the pending migrations in order, the lease renewed meanwhile. */
  async function applyHolding(): Promise<void> {
    let lost = false;
    const renew = setInterval(() => {
      coll
        .updateOne({ _id: 'lock', owner } as never, { $set: { expires_at: new Date(Date.now() + leaseMs) } })
        .then((r) => {
          if (r.matchedCount === 0) lost = true;
        })
        .catch(() => undefined);
    }, leaseMs / 3);
    try {
      // Read again under the lock: another replica may have finished some meanwhile.
      for (const m of await pending()) {
        if (lost) throw new Error('lost the migration lock (its lease ran out): another replica continues');
        await applyMigration(m, db, coll, opts);
        appliedHere.push(m.id);
      }
    } finally {
      clearInterval(renew);
    }
  }
}

/** One migration: run, then recorded as applied (a record another replica wrote first is fine). */
async function applyMigration(
  m: Migration,
  db: Connection,
  coll: ReturnType<Connection['collection']>,
  opts: MigrationOptions,
): Promise<void> {
  const started = Date.now();
  let changed = 0;
  opts.log.info({ migration: m.id }, `migrating: ${m.description}`);
  await m.up({
    db,
    log: opts.log,
    ferretdbPostgresUrl: opts.ferretdbPostgresUrl ?? '',
    progress: (n) => {
      changed = n;
      opts.log.info({ migration: m.id, changed: n }, 'migration progress');
      opts.onProgress?.({ migration: m.id, changed: n });
    },
  });
  await coll
    .insertOne({
      _id: `m:${m.id}`,
      description: m.description,
      applied_at: new Date(),
      took_ms: Date.now() - started,
      changed,
      host: hostname(),
    } as never)
    .catch((err) => {
      if (!isDuplicate(err)) throw err;
    });
  opts.log.info({ migration: m.id, changed, took_ms: Date.now() - started }, 'migration applied');
}

/** Takes the lock: a unique insert, or the takeover of a lock whose lease ran out. */
async function acquire(coll: ReturnType<Connection['collection']>, owner: string, leaseMs: number): Promise<boolean> {
  const lock = { _id: 'lock', owner, expires_at: new Date(Date.now() + leaseMs), host: hostname() };
  try {
    await coll.insertOne(lock as never);
    return true;
  } catch (err) {
    if (!isDuplicate(err)) throw err;
  }
  const held = (await coll.findOne({ _id: 'lock' } as never)) as LockDoc | null;
  if (!held || held.expires_at.getTime() > Date.now()) return false;
  // Of all who found this lock abandoned, the one that inserts its marker replaces it.
  try {
    await coll.insertOne({ _id: `takeover:${held.owner}`, at: new Date() } as never);
  } catch (err) {
    if (isDuplicate(err)) return false;
    throw err;
  }
  const r = await coll.replaceOne({ _id: 'lock', owner: held.owner } as never, lock);
  return r.modifiedCount === 1;
}

/**
 * Gives every document a model writes its collection's schema version: `schema_version`, unless the
 * schema declares it itself (a collection at a later version sets its own default).
 */
export function schemaVersionPlugin(schema: Schema): void {
  if (schema.path(SCHEMA_VERSION_FIELD)) return;
  schema.add({ [SCHEMA_VERSION_FIELD]: { type: Number, default: FIRST_SCHEMA_VERSION } });
}

/** The schema version a model writes its documents in: its schema's `schema_version` default (schemaVersionPlugin). */
export function schemaVersionOf(model: { schema: Schema }): number {
  const path = model.schema.path(SCHEMA_VERSION_FIELD) as { defaultValue?: unknown } | undefined;
  const value = typeof path?.defaultValue === 'function' ? (path.defaultValue as () => unknown)() : path?.defaultValue;
  return typeof value === 'number' ? value : FIRST_SCHEMA_VERSION;
}

/**
 * A document as mongoose would stamp it, for the writes that skip its defaults: a lean insertMany, the
 * driver's insertOne or insertMany (model.collection), a bulkWrite's insertOne or replacement. Every
 * raw write of a new document goes through this, so no document is ever stored without its version.
 */
export function withSchemaVersion<T extends object>(
  model: { schema: Schema },
  doc: T,
): T & { [SCHEMA_VERSION_FIELD]: number } {
  return { ...doc, [SCHEMA_VERSION_FIELD]: schemaVersionOf(model) } as T & { [SCHEMA_VERSION_FIELD]: number };
}

/**
 * The first migration of every service: each document without `schema_version` gets version 1 (the
 * shape every document had before versions were stored). Over FerretDB's PostgreSQL it is one atomic
 * SQL statement per batch (postgres/stamp.ts); on MongoDB an updateMany, atomic per document; over
 * FerretDB's SQLite (trying things out only) an updateMany too, which may race a write.
 */
export const stampSchemaVersion: Migration = {
  id: '0001-schema-version',
  description: 'every document gets schema_version 1',
  async up(ctx) {
    const names = (await ctx.db.db!.listCollections({}, { nameOnly: true }).toArray())
      .map((c) => c.name)
      .filter((n) => n !== MIGRATIONS_COLLECTION && !n.startsWith('system.'))
      .sort();
    await setWhereMissing(ctx, names, SCHEMA_VERSION_FIELD, FIRST_SCHEMA_VERSION);
  },
};

/**
 * A migration's building block: `field` set to `value` on every document of these collections that
 * lacks it, and on no other, so running it again changes nothing. Safe while the services write:
 * over FerretDB's PostgreSQL one atomic SQL statement per batch (postgres/stamp.ts), on MongoDB an
 * updateMany (atomic per document); over FerretDB's SQLite (trying things out only) an updateMany
 * too, which may race a write as any two FerretDB updates do.
 */
export async function setWhereMissing(
  { db, ferretdbPostgresUrl, progress }: MigrationContext,
  collections: string[],
  field: string,
  value: number | string,
): Promise<number> {
  if (!collections.length) return 0;
  if (ferretdbPostgresUrl) return stampWithPostgres(ferretdbPostgresUrl, db.name, collections, field, value, progress);
  let changed = 0;
  for (const name of collections) {
    // The driver's collection, not mongoose's: a one-off scan that no index is meant to serve, kept out of
    // the query shapes the index coverage check reads (query-shapes.ts).
    const r = await db.db!.collection(name).updateMany({ [field]: { $exists: false } }, { $set: { [field]: value } });
    changed += r.modifiedCount;
    progress(changed);
  }
  return changed;
}
