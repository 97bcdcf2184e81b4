import { PeriodicTask, type Clock, type Logger } from '@licensing/runtime';
import type { PortalStore } from '../store/portal';

/** Another kind of ended document to delete each pass (a bounded batch; how many went). */
export type EndedDeletion = (now: Date) => Promise<number>;

/**
 * Deletes expired sign-in links, their use marks and portal sessions, and the other ended documents it
 * is given (the sender's old claims, the mail quota's ended windows). FerretDB ignores TTL indexes,
 * so this does their work: each pass deletes a bounded batch through the expires_at index, and a
 * backlog goes over the next passes (reads check expires_at meanwhile, so nothing expired is honoured).
 */
export function portalCleanup(
  portal: PortalStore,
  clock: Clock,
  log: Logger,
  intervalMs: number,
  more: EndedDeletion[] = [],
): PeriodicTask {
  return new PeriodicTask(
    'portal cleanup',
    async () => {
      const now = clock.now();
      let n = await portal.deleteExpired(now);
      for (const deletion of more) n += await deletion(now);
      return n;
    },
    intervalMs,
    log,
  );
}
