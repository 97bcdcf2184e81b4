import mongoose, { type Connection } from 'mongoose';
import { queryDeadlinePlugin } from './query-deadline';
import { quietIdlePools } from './idle-pools';
import { schemaVersionPlugin } from './migrations';

/**
 * Each service has its own database on the shared server (dbName), and its own
 * connection: nothing here can reach another service's collections by accident.
 */
export async function connectMongo(url: string, dbName: string): Promise<Connection> {
  quietIdlePools();
  const conn = mongoose.createConnection(url, {
    dbName,
    serverSelectionTimeoutMS: 5000,
    maxPoolSize: 20,
    // Fail fast instead of queueing operations while disconnected.
    bufferCommands: false,
    // Indexes are created by syncIndexes() before the service reports SERVING.
    autoIndex: false,
  });
  // Every query of every model made on this connection is bounded by its call's deadline.
  conn.plugin(queryDeadlinePlugin);
  // Every document a model writes carries its collection's schema version (migrations.ts).
  conn.plugin(schemaVersionPlugin);
  await conn.asPromise();
  return conn;
}

const NOT_IMPLEMENTED = 238;
const NAMESPACE_EXISTS = 48;

/**
 * Creates every model's indexes before the service says it is ready. FerretDB
 * has no TTL indexes: there the index is created without expiry and the code
 * that reads such collections ignores expired entries itself.
 */
export async function syncIndexes(
  conn: Connection,
  /** Leaves out the indexes the store would keep up without ever using them (see postgres/indexes.ts). */
  unused: (options: Record<string, unknown>) => boolean = () => false,
): Promise<void> {
  for (const model of Object.values(conn.models)) {
    // Every collection exists before anything else looks at the store: with no index to create, FerretDB
    // would otherwise create the database (schema, then its metadata table, not atomically) on the
    // first write, racing addPostgresIndexes, and the collection would get none of its PostgreSQL indexes.
    await model.createCollection().catch((err: { code?: number }) => {
      if (err.code !== NAMESPACE_EXISTS) throw err;
    });
    for (const [fields, options] of model.schema.indexes()) {
      if (unused(options as Record<string, unknown>)) continue;
      try {
        await model.collection.createIndex(fields as Record<string, 1 | -1>, options as Record<string, unknown>);
      } catch (err) {
        if ((err as { code?: number }).code !== NOT_IMPLEMENTED || options.expireAfterSeconds === undefined) throw err;
        const { expireAfterSeconds: _ttl, ...plain } = options;
        await model.collection.createIndex(fields as Record<string, 1 | -1>, plain as Record<string, unknown>);
      }
    }
  }
}
