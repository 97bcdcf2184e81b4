import { exportWriterStopped, leaseLapsed, leaseUntil } from '../../src/transfer/domain/job-leases';

// An export is written by a gateway process under a lease the licence service keeps: these are the
// pure rules by which the licence service judges that lease (the gateway's side of it is in
// gateway/test/unit/export-leases.test.ts).

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));

describe('job leases (pure)', () => {
  it('a lease runs until its end; none, or one that ended before now, has lapsed', () => {
    expect(leaseUntil(at(0), 60_000)).toEqual(at(60));
    expect(leaseLapsed(at(60), at(59))).toBe(false);
    expect(leaseLapsed(at(60), at(60))).toBe(false);
    expect(leaseLapsed(at(60), at(61))).toBe(true);
    expect(leaseLapsed(null, at(0))).toBe(true);
    expect(leaseLapsed(undefined, at(0))).toBe(true);
  });

  it('a running export whose lease lapsed has a stopped writer; done and failed ones never', () => {
    const running = { state: 'running', lease_until: at(60), updated_at: at(0) };
    expect(exportWriterStopped(running, at(30), 60_000)).toBe(false);
    expect(exportWriterStopped(running, at(61), 60_000)).toBe(true);
    expect(exportWriterStopped({ ...running, state: 'done' }, at(600), 60_000)).toBe(false);
    expect(exportWriterStopped({ ...running, state: 'failed' }, at(600), 60_000)).toBe(false);
  });

  it('an export stored before leases is held for one lease from its last write', () => {
    const old = { state: 'running', updated_at: at(0) };
    expect(exportWriterStopped({ ...old, lease_until: null }, at(59), 60_000)).toBe(false);
    expect(exportWriterStopped(old, at(61), 60_000)).toBe(true);
    expect(exportWriterStopped(old, at(61), 120_000)).toBe(false);
  });
});
