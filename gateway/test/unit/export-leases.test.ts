import { AppError, createLogger } from '@licensing/runtime';
import type { Export } from '@licensing/proto';
import { EXPORT_WRITER_STOPPED } from '../../../services/license/src/transfer/domain/job-leases';
import { EXPORT_GATEWAY_SHUT_DOWN, ExportJobs, runExport } from '../../src/routes/export-jobs';
import { eventually } from '../../../test/support/eventually';

// An export is written by a gateway process; its lease in the licence service ends it when
// that process dies, and a graceful stop ends those it could not finish at once.

const log = createLogger('test', 'silent');

/** Clients whose product list never answers until released: an export stuck on a long page. */
function stuckClients() {
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  const calls = { renew: 0, finish: [] as string[] };
  let renewRefusal: AppError | undefined;
  const empty = { data: [], page: { has_more: false, next_cursor: '' } };
  const clients = {
    products: {
      listProducts: async () => {
        await released;
        return empty;
      },
    },
    imports: {
      renewExport: async () => {
        calls.renew++;
        if (renewRefusal) throw renewRefusal;
        return {};
      },
      exportLicenses: async () => ({ lines: [], next_after: '' }),
      appendExportChunk: async () => ({}),
      finishExport: async (req: { failure: string }) => {
        calls.finish.push(req.failure);
        return {};
      },
    },
    checkouts: { listSessions: async () => empty },
    webhooks: { listEndpoints: async () => empty },
    subscriptions: { listSubscriptions: async () => empty },
  };
  return { clients: clients as never, calls, release, refuse: (e: AppError) => (renewRefusal = e) };
}

describe('why an export failed', () => {
  it("the failure says the process stopped and to start a new export (the licence service's words and the gateway's)", () => {
    for (const text of [EXPORT_WRITER_STOPPED, EXPORT_GATEWAY_SHUT_DOWN]) {
      expect(text).toMatch(/process running this export stopped/);
      expect(text).toMatch(/start a new export$/);
    }
  });
});

describe('the gateway export job', () => {
  it('renews its lease while a page takes long, and stops renewing once it is done', async () => {
    // Jest's clock: the heartbeats are counted as time is moved, never waited for.
    jest.useFakeTimers();
    try {
      const s = stuckClients();
      const done = runExport(s.clients, 'acc_1', 'exp_1', log, { leaseMs: 1000 });
      await jest.advanceTimersByTimeAsync(1000); // a quarter of the lease each: 4 heartbeats
      expect(s.calls.renew).toBe(4);
      s.release();
      await done;
      expect(s.calls.finish).toEqual(['']);
      // Done: its heartbeat is gone, however much time passes.
      expect(jest.getTimerCount()).toBe(0);
      await jest.advanceTimersByTimeAsync(10_000);
      expect(s.calls.renew).toBe(4);
    } finally {
      jest.useRealTimers();
    }
  });

  it('a refused heartbeat (the export was failed meanwhile) stops the job', async () => {
    const s = stuckClients();
    s.refuse(new AppError('conflict', `the export is failed: ${EXPORT_WRITER_STOPPED}`));
    const done = runExport(s.clients, 'acc_1', 'exp_1', log, { leaseMs: 1000 });
    await eventually(() => expect(s.calls.renew).toBeGreaterThanOrEqual(1), { timeoutMs: 5000 });
    s.release();
    await done;
    expect(s.calls.finish).toHaveLength(1);
    expect(s.calls.finish[0]).toMatch(/^conflict: the export is failed/);
  });

  it('a graceful stop waits for an export that finishes in time', async () => {
    const s = stuckClients();
    const jobs = new ExportJobs(s.clients, log);
    jobs.start('acc_1', { id: 'exp_1', lease_ms: 60_000 } as Export);
    expect(jobs.size).toBe(1);
    const stopped = jobs.stop(10_000);
    s.release();
    await stopped;
    expect(jobs.size).toBe(0);
    expect(s.calls.finish).toEqual(['']);
  });

  it('a graceful stop fails at once the exports still running at its timeout', async () => {
    const s = stuckClients();
    const jobs = new ExportJobs(s.clients, log);
    jobs.start('acc_1', { id: 'exp_1', lease_ms: 60_000 } as Export);
    await jobs.stop(100);
    expect(s.calls.finish).toEqual([EXPORT_GATEWAY_SHUT_DOWN]);
    // The job, let go, ends without writing anything more.
    s.release();
    await eventually(() => expect(jobs.size).toBe(0));
    expect(s.calls.finish).toEqual([EXPORT_GATEWAY_SHUT_DOWN]);
  });
});
