import type { MongooseQueryMiddleware, Schema } from 'mongoose';
import { remainingMs } from '../core/request-scope';
import { outOfTime, readBudget } from '../core/time-budget';

// Bounded work per call. A gRPC call carries its caller's deadline (request
// scope); every store operation made on its behalf gets no more time than is
// left of it, so a handler stops when its deadline passes instead of working on
// for an answer nobody waits for:
// - reads carry `maxTimeMS` = the time left (never more than READ_MAX_MS, also
//   outside a call: no read may run away, whatever the data size; core/time-budget.ts);
// - an operation that would start after the deadline is not sent at all.
// Writes get the check but no maxTimeMS: one that started is let finish, so a
// change is either made or not, never cut in the middle of its statements.

const READS: MongooseQueryMiddleware[] = ['find', 'findOne', 'countDocuments', 'estimatedDocumentCount', 'distinct'];
const WRITES: MongooseQueryMiddleware[] = [
  'updateOne',
  'updateMany',
  'deleteOne',
  'deleteMany',
  'replaceOne',
  'findOneAndUpdate',
  'findOneAndDelete',
  'findOneAndReplace',
];

function checkTime(): void {
  if (remainingMs() <= 0) throw outOfTime();
}

/** A mongoose plugin (applied to every schema of a service's connection by connectMongo). */
export function queryDeadlinePlugin(schema: Schema): void {
  schema.pre(READS, function (this: { getOptions(): { maxTimeMS?: number }; maxTimeMS(ms: number): unknown }) {
    this.maxTimeMS(readBudget(this.getOptions().maxTimeMS, remainingMs()));
  });
  schema.pre(
    'aggregate',
    function (this: { options: { maxTimeMS?: number }; option(o: { maxTimeMS: number }): unknown }) {
      this.option({ maxTimeMS: readBudget(this.options.maxTimeMS, remainingMs()) });
    },
  );
  schema.pre(WRITES, checkTime);
  schema.pre('save', checkTime);
  schema.pre('insertMany', checkTime);
  schema.pre('bulkWrite', checkTime);
}

/** MongoDB's "operation exceeded time limit" (a read that hit its maxTimeMS) as the public 503. */
export function isStoreTimeout(err: unknown): boolean {
  const e = err as { code?: unknown; codeName?: unknown } | null;
  return !!e && (e.code === 50 || e.codeName === 'MaxTimeMSExpired');
}
