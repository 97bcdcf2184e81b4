import { SessionGuard, UNKNOWN_SESSION_MEMORY_MS } from '../../src/kit/session-guard';

describe('made-up session tokens', () => {
  function setup(limit: number) {
    let now = 0;
    const failures = new Map<string, number>();
    const throttle = {
      fail: async (key: string) => {
        const n = (failures.get(key) ?? 0) + 1;
        failures.set(key, n);
        return n > limit ? 60 : null;
      },
    };
    const guard = new SessionGuard(throttle as never, () => now, 3);
    return {
      guard,
      failures,
      advance: (ms: number) => {
        now += ms;
      },
    };
  }
  const token = (c: string) => c.repeat(43);

  it('never looks up a value that is not shaped like a session token', () => {
    const { guard } = setup(5);
    expect(
      ['', 'x', token('a').slice(1), `${token('a')}=`, token('+')].map((t) => guard.mayLookUp(t, '1.2.3.4')),
    ).toEqual([false, false, false, false, false]);
    expect(guard.mayLookUp(token('a'), '1.2.3.4')).toBe(true);
  });

  it('remembers an unknown token for a while, a bounded number of them', async () => {
    const { guard, advance } = setup(100);
    await guard.unknownToken(token('a'), '1.2.3.4');
    expect(guard.mayLookUp(token('a'), '5.6.7.8')).toBe(false);
    advance(UNKNOWN_SESSION_MEMORY_MS);
    expect(guard.mayLookUp(token('a'), '5.6.7.8')).toBe(true);
    for (const c of 'bcde') await guard.unknownToken(token(c), '1.2.3.4');
    // At most 3 remembered: the oldest (b) was forgotten first.
    expect('bcde'.split('').map((c) => guard.mayLookUp(token(c), '5.6.7.8'))).toEqual([true, false, false, false]);
  });

  it('stops looking up tokens from an address over its limit until its window ends; other addresses are asked', async () => {
    const { guard, failures, advance } = setup(2);
    for (const c of 'abc') await guard.unknownToken(token(c), '1.2.3.4');
    expect(failures.get('1.2.3.4')).toBe(3);
    expect(guard.mayLookUp(token('z'), '1.2.3.4')).toBe(false);
    expect(guard.mayLookUp(token('z'), '5.6.7.8')).toBe(true);
    advance(60_000);
    expect(guard.mayLookUp(token('z'), '1.2.3.4')).toBe(true);
  });
});
