// Leases of long jobs: an import run by this service, an export written by a gateway. The holder renews
// its lease while it works; a job whose holder stopped renewing (a crash, a killed process, a deploy) has
// lapsed, judged at the moment of asking, so nothing has to notice the holder going away.

/** The end of a lease taken or renewed now. */
export const leaseUntil = (now: Date, ms: number): Date => new Date(now.getTime() + ms);

/** No live holder has the job: it was never leased (or was let go), or its lease ended before now. */
export const leaseLapsed = (until: Date | null | undefined, now: Date): boolean =>
  !until || until.getTime() < now.getTime();

/** What a user reads of an export whose writer stopped (docs/api.md, "Exports"). */
export const EXPORT_WRITER_STOPPED =
  'the process running this export stopped before it finished (its gateway crashed, was killed or restarted): start a new export';

/**
 * Whether a running export's writer has stopped: its lease lapsed. An export from before leases were
 * stored is judged by its last write, held for one lease from then.
 */
export function exportWriterStopped(
  doc: { state: string; lease_until?: Date | null; updated_at: Date },
  now: Date,
  leaseMs: number,
): boolean {
  if (doc.state !== 'running') return false;
  return leaseLapsed(doc.lease_until ?? leaseUntil(doc.updated_at, leaseMs), now);
}
