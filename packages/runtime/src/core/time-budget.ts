import { AppError } from './errors';

// What work done for a call may still spend: the budget of a store read (MongoDB's maxTimeMS in
// store/query-deadline.ts, PostgreSQL's statement_timeout in store/postgres/pages.ts) and the error of
// work refused because the caller has stopped waiting.

/** No read runs longer than this, inside a call or not, whatever the data size. */
export const READ_MAX_MS = 10_000;

/** The error of work refused because its call's deadline has passed (the caller has stopped waiting). */
export function outOfTime(): AppError {
  return new AppError('service_unavailable', 'the call ran out of time');
}

/** The time a read gets now: what is left of the call (`left`), capped by what it already asked for and READ_MAX_MS. */
export function readBudget(asked: number | undefined, left: number): number {
  if (left <= 0) throw outOfTime();
  return Math.max(1, Math.floor(Math.min(asked ?? READ_MAX_MS, READ_MAX_MS, left)));
}
