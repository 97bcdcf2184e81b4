import { shouldReconnect, WATCHDOG_DEFAULTS } from '@licensing/runtime';

describe('the store watchdog decides', () => {
  const base = { now: 100_000, lastOkAt: 100_000 - WATCHDOG_DEFAULTS.reconnectAfterMs, lastReconnectAt: 0 };

  it('to reconnect after a long enough silence while the store answers a client of its own', () => {
    expect(shouldReconnect({ ...base, answersOthers: true }, WATCHDOG_DEFAULTS)).toBe(true);
    expect(shouldReconnect({ ...base, answersOthers: true }, WATCHDOG_DEFAULTS)).toBe(true);
  });

  it('not to while the store answers nobody (a real outage), or before the silence is long enough', () => {
    expect(shouldReconnect({ ...base, answersOthers: false }, WATCHDOG_DEFAULTS)).toBe(false);
    expect(shouldReconnect({ ...base, lastOkAt: base.lastOkAt + 1, answersOthers: true }, WATCHDOG_DEFAULTS)).toBe(
      false,
    );
  });

  it('at most once per threshold: a reconnect starts the silence again', () => {
    expect(
      shouldReconnect({ ...base, lastReconnectAt: base.now - 1_000, answersOthers: true }, WATCHDOG_DEFAULTS),
    ).toBe(false);
  });
});
