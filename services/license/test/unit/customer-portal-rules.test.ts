import { CUSTOMER_WINDOW_MS, describeMoment, judgeCustomerDeactivation } from '../../src/domain/customer-deactivations';
import { escapeRegExp, replaceEmail } from '../../src/domain/erasure';

const now = new Date('2026-03-31T12:00:00.000Z');
const daysAgo = (d: number) => new Date(now.getTime() - d * 86_400_000);

describe('customer deactivations per rolling 30 days', () => {
  it('allows while fewer than the limit are in the window', () => {
    expect(judgeCustomerDeactivation(3, [], now)).toEqual({ allowed: true });
    expect(judgeCustomerDeactivation(3, [daysAgo(1), daysAgo(2)], now)).toEqual({ allowed: true });
  });

  it('counts only those within the last 30 days', () => {
    expect(judgeCustomerDeactivation(3, [daysAgo(1), daysAgo(2), daysAgo(30), daysAgo(45)], now)).toEqual({
      allowed: true,
    });
  });

  it('0 turns it off, whatever the history', () => {
    expect(judgeCustomerDeactivation(0, [], now)).toEqual({ allowed: false, reason: 'disabled' });
  });

  it('used up: the next one is allowed when the oldest of the window leaves it, in whole seconds', () => {
    const oldest = daysAgo(10);
    const verdict = judgeCustomerDeactivation(3, [daysAgo(1), oldest, daysAgo(5)], now);
    expect(verdict).toEqual({
      allowed: false,
      reason: 'used_up',
      nextAt: new Date(oldest.getTime() + CUSTOMER_WINDOW_MS),
      retryAfterS: 20 * 86_400,
    });
  });

  it('with more than the limit in the window (a race), waits until enough have left it', () => {
    // Four in the window with a limit of 3: two must leave; the second oldest leaves at +30 days.
    const verdict = judgeCustomerDeactivation(3, [daysAgo(1), daysAgo(2), daysAgo(20), daysAgo(25)], now);
    expect(verdict).toMatchObject({ reason: 'used_up', nextAt: new Date(daysAgo(20).getTime() + CUSTOMER_WINDOW_MS) });
  });

  it('the retry is at least a second away', () => {
    const justInside = new Date(now.getTime() - CUSTOMER_WINDOW_MS + 10);
    expect(judgeCustomerDeactivation(1, [justInside], now)).toMatchObject({ retryAfterS: 1 });
  });

  it('names the moment in words, in UTC', () => {
    expect(describeMoment(new Date('2026-04-20T09:05:59.000Z'))).toBe('20 April 2026, 09:05 UTC');
  });
});

describe("replacing the e-mail in activations' names", () => {
  it('replaces every occurrence in any case, and nothing else', () => {
    expect(
      replaceEmail(
        "Bob.Smith@Example.com's laptop (bob.smith@example.COM)",
        'bob.smith@example.com',
        'x@erased.invalid',
      ),
    ).toBe("x@erased.invalid's laptop (x@erased.invalid)");
    expect(replaceEmail('Work PC', 'bob@example.com', 'x@erased.invalid')).toBe('Work PC');
  });

  it('takes the e-mail literally (dots and plus are not patterns, $ in the placeholder is not special)', () => {
    expect(replaceEmail('bobXexample.com', 'bob@example.com', 'p')).toBe('bobXexample.com');
    expect(replaceEmail('a+b@x.io box', 'A+B@x.io', '$&$1@erased.invalid')).toBe('$&$1@erased.invalid box');
    expect(new RegExp(escapeRegExp('a+b.c(d)[e]')).test('a+b.c(d)[e]')).toBe(true);
  });
});
