import type { Connection, Model } from 'mongoose';
import type { Clock } from '../core/clock';
import type { Logger } from '../observability/logger';
import { PeriodicTask } from '../tasks/periodic';
import { deleteBefore } from './expired';

/** Documents one TTL index lets go of per pass: a backlog goes over the next passes, so a pass costs the same at any size. */
export const TTL_SWEEP_BATCH = 1000;

export interface TtlIndex {
  // biome-ignore lint/suspicious/noExplicitAny: any collection with a date field
  model: Model<any>;
  field: string;
  expireAfterSeconds: number;
}

/** The single-field TTL indexes (`expireAfterSeconds`) the models of a connection declare. */
export function ttlIndexesOf(conn: Connection): TtlIndex[] {
  const found: TtlIndex[] = [];
  for (const model of Object.values(conn.models)) {
    for (const [keys, options] of model.schema.indexes()) {
      const fields = Object.keys(keys);
      const seconds = (options as { expireAfterSeconds?: number } | undefined)?.expireAfterSeconds;
      if (fields.length === 1 && typeof seconds === 'number')
        found.push({ model, field: fields[0], expireAfterSeconds: seconds });
    }
  }
  return found;
}

/** One pass: up to TTL_SWEEP_BATCH expired documents of each TTL index deleted; how many went. */
export async function sweepExpired(indexes: TtlIndex[], now: Date, batch = TTL_SWEEP_BATCH): Promise<number> {
  let deleted = 0;
  for (const { model, field, expireAfterSeconds } of indexes)
    deleted += await deleteBefore(model, field, new Date(now.getTime() - expireAfterSeconds * 1000), batch);
  return deleted;
}

/**
 * MongoDB's TTL monitor deletes what a TTL index lets expire; FerretDB ignores TTL indexes, so over it
 * sessions, sign-ups, idempotency records and request keys would pile up for ever. This task does the
 * monitor's work for every TTL index the service's models declare (read afresh each pass, so a model
 * declared late is swept too): a bounded batch per index per pass, through the field's B-tree. Reads
 * already check expiry themselves, so nothing expired is honoured while it waits.
 */
export function ttlSweep(conn: Connection, clock: Clock, log: Logger, intervalMs: number): PeriodicTask {
  return new PeriodicTask(
    'ttl sweep',
    async () => {
      const deleted = await sweepExpired(ttlIndexesOf(conn), clock.now());
      if (deleted) log.debug({ deleted }, 'expired documents deleted');
      return deleted;
    },
    intervalMs,
    log,
  );
}
