import { admitsLocally, MIN_LOCAL_BATCH } from '../../gateway/src/quota';

// When a gateway may admit a request without asking Redis (quota.ts has the accuracy argument).
describe('local rate-limit decisions', () => {
  const now = 1_000_000;
  const open = (count: number, pending = 0) => ({ count, pending, resetAt: now + 60_000 });

  it('needs a known, running window', () => {
    expect(admitsLocally(undefined, 1_000_000, now, 0.01)).toBe(false);
    expect(admitsLocally({ count: 0, pending: 0, resetAt: now }, 1_000_000, now, 0.01)).toBe(false);
    expect(admitsLocally(open(0), 1_000_000, now, 0.01)).toBe(true);
  });

  it('never for small limits or a zero share: those ask Redis on every request', () => {
    expect(admitsLocally(open(0), 100, now, 0.01)).toBe(false);
    expect(admitsLocally(open(0), MIN_LOCAL_BATCH * 100 - 1, now, 0.01)).toBe(false);
    expect(admitsLocally(open(0), MIN_LOCAL_BATCH * 100, now, 0.01)).toBe(true);
    expect(admitsLocally(open(0), 1_000_000, now, 0)).toBe(false);
  });

  it('admits at most one batch (share × limit) between syncs', () => {
    expect(admitsLocally(open(0, 9_999), 1_000_000, now, 0.01)).toBe(true);
    expect(admitsLocally(open(0, 10_000), 1_000_000, now, 0.01)).toBe(false);
  });

  it('stops ten batches before the limit, where every request asks Redis', () => {
    expect(admitsLocally(open(899_999), 1_000_000, now, 0.01)).toBe(true);
    expect(admitsLocally(open(900_000), 1_000_000, now, 0.01)).toBe(false);
    expect(admitsLocally(open(899_000, 1_000), 1_000_000, now, 0.01)).toBe(false);
  });
});
