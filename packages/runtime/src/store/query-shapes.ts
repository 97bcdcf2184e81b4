import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Connection } from 'mongoose';

// Every query shape the code sends to a store, recorded while the test suite
// runs (QUERY_SHAPES_DIR set), so `npm test` can check each one against the
// MongoDB indexes the models declare (scripts/check-query-shapes.ts): the
// shapes come from the code as it runs, not from a list kept by hand.

export interface QueryShape {
  collection: string;
  method: string;
  /** Filter fields: "eq" for an equality, "range" for any operator ($gt, $in, $exists, $or, ...). */
  filter: Record<string, 'eq' | 'range'>;
  sort: Array<[string, 1 | -1]>;
}

export interface DeclaredIndexes {
  collection: string;
  indexes: Array<Array<[string, 1 | -1]>>;
}

const READS = new Set([
  'find',
  'findOne',
  'countDocuments',
  'updateOne',
  'updateMany',
  'deleteOne',
  'deleteMany',
  'findOneAndUpdate',
  'findOneAndDelete',
  'replaceOne',
]);

export function shapeOf(
  collection: string,
  method: string,
  filter: Record<string, unknown> = {},
  sort: Record<string, unknown> = {},
): QueryShape {
  const fields: Record<string, 'eq' | 'range'> = {};
  const visit = (f: Record<string, unknown>, inOr: boolean) => {
    for (const [k, v] of Object.entries(f ?? {})) {
      if (k === '$or' || k === '$and' || k === '$nor') {
        for (const branch of v as Record<string, unknown>[]) visit(branch, k !== '$and' || inOr);
        continue;
      }
      const isOperator =
        v !== null &&
        typeof v === 'object' &&
        !(v instanceof Date) &&
        !Array.isArray(v) &&
        Object.keys(v).some((x) => x.startsWith('$'));
      const kind = !inOr && (!isOperator || Object.keys(v as object).every((x) => x === '$eq')) ? 'eq' : 'range';
      fields[k] = fields[k] === 'range' || kind === 'range' ? 'range' : 'eq';
    }
  };
  visit(filter, false);
  return {
    collection,
    method,
    filter: fields,
    sort: Object.entries(sort ?? {}).map(([k, d]) => [k, Number(d) < 0 ? -1 : 1]),
  };
}

/** Appends this process's query shapes and declared indexes to `<dir>/<pid>.jsonl`, each once. */
export class QueryShapeLog {
  private readonly file: string;
  private readonly seen = new Set<string>();

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true });
    this.file = join(dir, `${process.pid}.jsonl`);
  }

  private write(line: unknown): void {
    const text = JSON.stringify(line);
    if (this.seen.has(text)) return;
    this.seen.add(text);
    appendFileSync(this.file, `${text}\n`);
  }

  /** Every query on the connection, as mongoose's debug hook sees it: (collection, method, filter, ...options). */
  watch(conn: Connection): void {
    conn.set('debug', (collection: string, method: string, filter: Record<string, unknown>, ...rest: unknown[]) => {
      if (!READS.has(method)) return;
      const options = rest.find((r) => !!r && typeof r === 'object' && 'sort' in (r as object)) as
        | { sort?: Record<string, unknown> }
        | undefined;
      this.write({ shape: shapeOf(collection, method, filter, options?.sort) });
    });
  }

  /** The indexes the connection's models declare. */
  declare(conn: Connection): void {
    for (const model of Object.values(conn.models)) {
      const indexes = model.schema
        .indexes()
        .map(([keys]) => Object.entries(keys).map(([k, d]) => [k, Number(d) < 0 ? -1 : 1]));
      this.write({ declared: { collection: model.collection.collectionName, indexes } });
    }
  }
}
