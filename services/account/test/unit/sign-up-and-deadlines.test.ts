import { READ_MAX_MS, readBudget } from '@licensing/runtime';
import {
  alreadyRegisteredMail,
  confirmationMail,
  digestSignupToken,
  isSignupToken,
  newSignupToken,
} from '../../src/domain/signup';

describe('sign-up links', () => {
  it('a token is 256 random bits; only its digest is stored', () => {
    const a = newSignupToken();
    const b = newSignupToken();
    expect(isSignupToken(a.token)).toBe(true);
    expect(a.token).not.toBe(b.token);
    expect(a.digest).toBe(digestSignupToken(a.token));
    expect(a.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(a.digest).not.toContain(a.token);
  });

  it.each(['', 'short', 'A'.repeat(42), 'A'.repeat(44), `${'A'.repeat(42)}!`, `${'A'.repeat(42)}\n`])(
    'refuses %p without a look-up',
    (t) => {
      expect(isSignupToken(t)).toBe(false);
    },
  );

  it('the confirmation mail carries the link; the note to a registered address carries none', () => {
    const confirm = confirmationMail('new@example.com', 'Acme', 'https://l.example/dashboard/signup/confirm?token=abc');
    expect(confirm).toMatchObject({ to: 'new@example.com' });
    expect(confirm.text).toContain('https://l.example/dashboard/signup/confirm?token=abc');
    expect(confirm.text).toContain('"Acme"');
    const note = alreadyRegisteredMail('old@example.com', 'https://l.example/dashboard/signin');
    expect(note.text).toContain('https://l.example/dashboard/signin');
    expect(note.text).not.toContain('confirm?token');
  });
});

describe('read budget within a call deadline', () => {
  it('is the time left, capped by the read’s own limit and READ_MAX_MS', () => {
    expect(readBudget(undefined, 1234.7)).toBe(1234);
    expect(readBudget(500, 1234)).toBe(500);
    expect(readBudget(undefined, Infinity)).toBe(READ_MAX_MS);
    expect(readBudget(60_000, Infinity)).toBe(READ_MAX_MS);
    expect(readBudget(undefined, 0.4)).toBe(1); // never 0: MongoDB reads maxTimeMS 0 as "no limit"
  });

  it('refuses to start once the deadline has passed', () => {
    expect(() => readBudget(undefined, 0)).toThrow('the call ran out of time');
    expect(() => readBudget(100, -5)).toThrow(expect.objectContaining({ code: 'service_unavailable' }));
  });
});
