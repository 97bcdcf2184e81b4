import { PeriodicTask, type Clock, type Logger } from '@licensing/runtime';
import { retentionBound } from '../domain/audit';
import type { AuditStore } from '../store/audit';

/** Entries removed per statement: a pass removes what has expired, a batch at a time. */
export const AUDIT_PRUNE_BATCH = 1000;

/**
 * Removes the audit entries older than AUDIT_RETENTION_DAYS, every account's, oldest first: each
 * statement finds its batch by the `at` index, so a pass costs what has expired, not what is kept.
 */
export async function pruneAudit(
  audit: Pick<AuditStore, 'removeBefore'>,
  now: Date,
  days: number,
  batch = AUDIT_PRUNE_BATCH,
): Promise<number> {
  const bound = retentionBound(now, days);
  let removed = 0;
  for (;;) {
    const n = await audit.removeBefore(bound, batch);
    removed += n;
    if (n < batch) return removed;
  }
}

/** The retention job, every `intervalMs`. */
export function auditRetention(
  audit: Pick<AuditStore, 'removeBefore'>,
  clock: Clock,
  settings: { days: number; intervalMs: number },
  log: Logger,
): PeriodicTask {
  return new PeriodicTask(
    'audit retention',
    async () => {
      const removed = await pruneAudit(audit, clock.now(), settings.days);
      if (removed) log.info({ removed, days: settings.days }, 'removed audit entries past their retention');
    },
    settings.intervalMs,
    log,
  );
}
