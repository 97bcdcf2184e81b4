import { bodyPattern, eraseFromBody, jsonForm } from '../../src/domain/erasure';

describe('erasing the e-mail from webhook bodies', () => {
  const body = JSON.stringify({
    id: 'evt_1',
    type: 'license.created',
    data: { license: { customer_email: 'Ann@Example.com', key: 'K' }, note: 'for ann@example.com, thanks' },
  });

  it('replaces it in every string, in any case, and keeps the body as the fan-out writes it', () => {
    const out = eraseFromBody(body, 'ann@example.com', 'erased-1@erased.invalid');
    expect(out).not.toMatch(/ann@example\.com/i);
    expect(JSON.parse(out)).toEqual({
      id: 'evt_1',
      type: 'license.created',
      data: {
        license: { customer_email: 'erased-1@erased.invalid', key: 'K' },
        note: 'for erased-1@erased.invalid, thanks',
      },
    });
  });

  it('finds the e-mail in its JSON-escaped form', () => {
    const odd = '"o\\"dd"@example.com';
    const withOdd = JSON.stringify({ email: odd });
    expect(jsonForm(odd)).toBe('\\"o\\\\\\"dd\\"@example.com');
    expect(new RegExp(bodyPattern(odd), 'i').test(withOdd)).toBe(true);
    expect(JSON.parse(eraseFromBody(withOdd, odd, 'p@erased.invalid'))).toEqual({ email: 'p@erased.invalid' });
  });

  it('replaces the e-mail only as a whole address, never inside a longer one', () => {
    const others = ['jimbob@example.com', 'bob@example.com.au', 'bob@example.community', 'x.bob@example.com'];
    const mixed = JSON.stringify({
      customer_email: 'BOB@example.com',
      others,
      note: 'bob@example.com.',
      name: "Bob@Example.com's laptop",
      nested: { 'bob@example.com': ['cc: jimbob@example.com, bob@example.com'], 'josébob@example.com': 1 },
    });
    expect(JSON.parse(eraseFromBody(mixed, 'bob@example.com', 'p@erased.invalid'))).toEqual({
      customer_email: 'p@erased.invalid',
      others,
      note: 'p@erased.invalid.',
      name: "p@erased.invalid's laptop",
      nested: { 'p@erased.invalid': ['cc: jimbob@example.com, p@erased.invalid'], 'josébob@example.com': 1 },
    });
    // A body holding only longer addresses is not changed at all.
    const unrelated = JSON.stringify({ others });
    expect(eraseFromBody(unrelated, 'bob@example.com', 'p@erased.invalid')).toBe(unrelated);
  });

  it("the store's pattern finds a body with the whole address, and none with only a longer one", () => {
    const finds = (value: unknown) =>
      new RegExp(bodyPattern('bob@example.com'), 'i').test(JSON.stringify({ id: 'evt_1', data: value }));
    for (const value of [
      'Bob@Example.com',
      'line\nbob@example.com',
      "bob@example.com's laptop",
      'bob@example.com.',
      ['bob@example.com'],
    ])
      expect([value, finds(value)]).toEqual([value, true]);
    for (const value of [
      'jimbob@example.com',
      'bob@example.com.au',
      'bob@example.community',
      'x.bob@example.com',
      'bob@example.com-x',
    ])
      expect([value, finds(value)]).toEqual([value, false]);
  });

  it('leaves a body without the e-mail exactly as it was', () => {
    expect(eraseFromBody(body, 'someone@else.com', 'p@erased.invalid')).toBe(body);
  });

  it('a body that is not JSON has the JSON form replaced as text', () => {
    expect(eraseFromBody('not json ANN@example.com', 'ann@example.com', 'p@erased.invalid')).toBe(
      'not json p@erased.invalid',
    );
  });
});
