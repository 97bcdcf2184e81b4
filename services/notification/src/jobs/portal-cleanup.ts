import { PeriodicTask, type Clock, type Logger } from '@licensing/runtime';
import type { PortalStore } from '../store/portal';

/**
 * Deletes expired sign-in links, their use marks and portal sessions. FerretDB ignores TTL indexes,
 * so this does their work: each pass deletes a bounded batch through the expires_at index, and a
 * backlog goes over the next passes (reads check expires_at meanwhile, so nothing expired is honoured).
 */
export function portalCleanup(portal: PortalStore, clock: Clock, log: Logger, intervalMs: number): PeriodicTask {
  return new PeriodicTask('portal cleanup', () => portal.deleteExpired(clock.now()), intervalMs, log);
}
