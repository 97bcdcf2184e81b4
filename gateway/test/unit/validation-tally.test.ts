import { AppError, Metrics, createLogger } from '@licensing/runtime';
import { RecordValidationsRequest } from '@licensing/proto';
import type { Clients } from '../../src/backends/clients';
import { COUNTS_CALL_BYTES, ValidationTally } from '../../src/license-validation/tally';

// What a gateway sends the licence service about the validations it answered from its cache.
function tallyWith(send: (req: RecordValidationsRequest) => Promise<object>) {
  const clients = { licenses: { recordValidations: send } } as unknown as Clients;
  return new ValidationTally(clients, createLogger('test', 'silent'), 1000);
}

describe('the gateway’s validation tally', () => {
  const at = new Date('2026-06-01T10:42:13Z');

  it('sends counts per hour and answer code, and recent validations grouped by licence, hour, code and machine', async () => {
    const sent: RecordValidationsRequest[] = [];
    const tally = tallyWith(async (req) => {
      sent.push(req);
      return {};
    });
    tally.record('acc_1', 'valid', true, at);
    tally.record('acc_1', 'valid', true, at);
    tally.record('acc_1', 'not_found', false, at);
    tally.validated('acc_1', 'lic_1', at, 'valid', 'mac-1');
    tally.validated('acc_1', 'lic_1', new Date(at.getTime() + 1000), 'valid', 'mac-1');
    tally.validated('acc_1', 'lic_1', at, 'suspended', '');
    await tally.flush();
    expect(sent).toHaveLength(1);
    expect(sent[0].tallies).toEqual([
      {
        account_id: 'acc_1',
        hour: '2026-06-01T10:00:00.000Z',
        validations: 3,
        valid: 2,
        by_code: { valid: 2, not_found: 1 },
      },
    ]);
    expect(sent[0].seen).toEqual([
      {
        account_id: 'acc_1',
        license_id: 'lic_1',
        hour: '2026-06-01T10:00:00.000Z',
        code: 'valid',
        fingerprint: 'mac-1',
        count: 2,
        last_at: '2026-06-01T10:42:14.000Z',
      },
      {
        account_id: 'acc_1',
        license_id: 'lic_1',
        hour: '2026-06-01T10:00:00.000Z',
        code: 'suspended',
        fingerprint: '',
        count: 1,
        last_at: '2026-06-01T10:42:13.000Z',
      },
    ]);
    await tally.flush();
    expect(sent).toHaveLength(1); // nothing new, nothing sent
  });

  it('keeps what a failed send carried and adds it to the next one', async () => {
    const sent: RecordValidationsRequest[] = [];
    let fail = true;
    const tally = tallyWith(async (req) => {
      if (fail) throw new Error('licence service away');
      sent.push(req);
      return {};
    });
    tally.record('acc_1', 'revoked', false, at);
    tally.validated('acc_1', 'lic_1', at, 'revoked', 'mac-1');
    await tally.flush();
    fail = false;
    tally.record('acc_1', 'revoked', false, at);
    tally.validated('acc_1', 'lic_1', at, 'revoked', 'mac-1');
    await tally.flush();
    expect(sent[0].tallies[0]).toMatchObject({ validations: 2, valid: 0, by_code: { revoked: 2 } });
    expect(sent[0].seen).toEqual([expect.objectContaining({ code: 'revoked', fingerprint: 'mac-1', count: 2 })]);
  });
});

describe('a backlog of validation counts', () => {
  const at = new Date('2026-06-01T10:42:13Z');
  const ONE_MIB = 1024 * 1024;
  /** What grpc-js answers for a message over the server's limit, as the gateway's client turns it into an AppError. */
  const tooLarge = () => new AppError('rate_limited', 'Received message larger than max');
  const fingerprint = (i: number) => `machine-${i}-`.padEnd(200, 'x');
  const size = (req: RecordValidationsRequest) => RecordValidationsRequest.encode(req).finish().length;
  const machines = (req: RecordValidationsRequest[]) => new Set(req.flatMap((r) => r.seen.map((s) => s.fingerprint)));

  it('larger than the licence service accepts goes in several calls, each well under its limit, all of it once', async () => {
    const sent: { req: RecordValidationsRequest; bytes: number }[] = [];
    const tally = tallyWith(async (req) => {
      const bytes = size(req);
      if (bytes > ONE_MIB) throw tooLarge();
      sent.push({ req, bytes });
      return {};
    });
    const n = 8000; // 8000 machines of 200-character fingerprints: about 2.7 MB
    for (let i = 0; i < n; i++) tally.cell('acc_1', 'valid', true, at, 'lic_1', fingerprint(i)).add(at.getTime());
    await tally.flush();
    expect(sent.length).toBeGreaterThan(1);
    expect(sent.reduce((sum, s) => sum + s.bytes, 0)).toBeGreaterThan(2 * ONE_MIB);
    for (const { bytes } of sent) expect(bytes).toBeLessThanOrEqual(COUNTS_CALL_BYTES);
    const reqs = sent.map((s) => s.req);
    expect(machines(reqs).size).toBe(n);
    expect(reqs.flatMap((r) => r.seen)).toHaveLength(n);
    expect(reqs.flatMap((r) => r.tallies)).toEqual([expect.objectContaining({ validations: n, valid: n })]);
    await tally.flush();
    expect(sent).toHaveLength(reqs.length); // nothing kept back, nothing sent twice
  });

  it('a call refused as too large (RESOURCE_EXHAUSTED) is split until it passes, never kept whole for the next flush', async () => {
    const calls: number[] = [];
    const sent: RecordValidationsRequest[] = [];
    const limit = 20_000; // a service that accepts much less than the gateway's calls
    const tally = tallyWith(async (req) => {
      const bytes = size(req);
      calls.push(bytes);
      if (bytes > limit) throw tooLarge();
      sent.push(req);
      return {};
    });
    for (let i = 0; i < 1000; i++) tally.validated('acc_1', 'lic_1', at, 'valid', fingerprint(i));
    await tally.flush();
    expect(machines(sent).size).toBe(1000); // all of it, in this flush
    expect(Math.max(...sent.map(size))).toBeLessThanOrEqual(limit);
    const before = calls.length;
    await tally.flush();
    expect(calls.length).toBe(before); // nothing was kept to be refused again
  });

  it('while the licence service is away, keeps at most the bound of each kind, dropping the oldest, counted and logged', async () => {
    let away = true;
    const sent: RecordValidationsRequest[] = [];
    const metrics = new Metrics('test');
    const warnings: string[] = [];
    const log = createLogger('test', 'silent');
    log.warn = ((_obj: unknown, msg: string) => void warnings.push(msg)) as typeof log.warn;
    const clients = {
      licenses: {
        recordValidations: async (req: RecordValidationsRequest) => {
          if (away) throw new AppError('service_unavailable', 'a backing service is unavailable');
          sent.push(req);
          return {};
        },
      },
    } as unknown as Clients;
    const tally = new ValidationTally(clients, log, 1000, metrics, { maxWaiting: 100 });
    // 250 machines over three flushes of an outage: only the newest 100 are kept.
    for (let i = 0; i < 250; i++) {
      tally.validated('acc_1', `lic_${i}`, at, 'valid', fingerprint(i));
      if (i % 100 === 99) await tally.flush();
    }
    await tally.flush();
    away = false;
    await tally.flush();
    const kept = [...machines(sent)];
    expect(kept).toEqual(Array.from({ length: 100 }, (_, i) => fingerprint(150 + i)));
    expect(sent.flatMap((r) => r.last_validated.map((v) => v.license_id))).toEqual(
      Array.from({ length: 100 }, (_, i) => `lic_${150 + i}`),
    );
    const dropped = (await metrics.registry.getSingleMetric('licensing_validation_counts_dropped_total')!.get()).values;
    expect(Object.fromEntries(dropped.map((v) => [v.labels.kind, v.value]))).toEqual({
      seen: 150,
      last_validated: 150,
    });
    expect(warnings).toContain('dropped the oldest validation counts: too many waited for the licence service');
  });
});
