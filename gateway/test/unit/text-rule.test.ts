import {
  checkText,
  findForbiddenText,
  forbiddenCharacter,
  formTextProblem,
  metadataKeyProblem,
} from '@licensing/runtime';
import { textPattern } from '../../src/openapi/shape-schema';

// The one rule for text in requests (packages/runtime text.ts), used by the
// gateway's shapes, the OpenAPI patterns, the dashboard, the hosted page, the
// CLI and every gRPC service.

/** What the rule says, written out independently of its regular expression. */
function refused(unit: number, multiline: boolean): boolean {
  if (unit === 0x09 || unit === 0x0a || unit === 0x0d) return !multiline;
  return (
    unit <= 0x1f ||
    (unit >= 0x7f && unit <= 0x9f) ||
    (unit >= 0xd800 && unit <= 0xdfff) || // alone, every surrogate is unpaired
    (unit >= 0xfdd0 && unit <= 0xfdef) ||
    unit === 0xfffe ||
    unit === 0xffff
  );
}

describe('the text rule', () => {
  it.each([false, true])(
    'refuses exactly the controls, unpaired surrogates and noncharacters of the BMP (multi-line: %p), as the OpenAPI pattern does',
    (multiline) => {
      const pattern = new RegExp(textPattern(multiline, false), 'u');
      const wrong: string[] = [];
      for (let unit = 0; unit <= 0xffff; unit++) {
        const text = `a${String.fromCharCode(unit)}b`;
        const expected = refused(unit, multiline);
        const found = forbiddenCharacter(text, multiline);
        if (
          (found !== undefined) !== expected ||
          (found && found !== `U+${unit.toString(16).toUpperCase().padStart(4, '0')}`)
        )
          wrong.push(`${unit.toString(16)}: ${found}`);
        if (pattern.test(text) === expected) wrong.push(`${unit.toString(16)}: the pattern disagrees`);
      }
      expect(wrong).toEqual([]);
    },
  );

  it('lets paired surrogates (emoji), non-breaking spaces, accents and right-to-left text through', () => {
    for (const ok of ['😀 👩‍💻', 'Zoë Ñandú', 'a\u00a0b', 'مرحبا', '漢字', '\ufffd', '\u{10ffff}'.slice(0, 2)])
      expect(forbiddenCharacter(ok)).toBeUndefined();
    expect(forbiddenCharacter('\udc00\ud800')).toBe('U+DC00'); // a reversed pair is two unpaired halves
    expect(forbiddenCharacter('x\ud83d')).toBe('U+D83D'); // an emoji cut in half
  });

  it('refuses with a 400 naming the field', () => {
    expect(() => checkText('name', 'Acme\u0000')).toThrow(
      expect.objectContaining({
        code: 'invalid_request',
        fieldErrors: [
          { field: 'name', message: 'name must not contain control characters or unpaired surrogates (found U+0000)' },
        ],
      }),
    );
    expect(checkText('description', 'two\nlines', true)).toBe('two\nlines');
  });

  it('finds a refused character anywhere in a request, keys included, by its path', () => {
    expect(findForbiddenText({ a: 'ok', b: { c: ['x', 'y\u0007'] } })).toEqual({
      field: 'b.c[1]',
      message: expect.stringContaining('U+0007'),
    });
    expect(findForbiddenText({ metadata: { 'k\u0000': 'v' } })?.field).toBe('metadata.k\\u0000');
    // Below the edges line breaks pass (a description may hold them); the edges refuse them in one-line fields.
    expect(findForbiddenText({ description: 'a\r\n\tb', payload: new Uint8Array([0]) })).toBeUndefined();
  });

  it('checks posted forms and query strings: every value, repeated ones and the names', () => {
    expect(formTextProblem({ email: 'a@b.c', events: ['x', 'y\u0000'] })?.field).toBe('events');
    expect(formTextProblem({ 'na\u0001me': 'x' })?.field).toBe('na\\u0001me');
    expect(formTextProblem({ description: 'a\nb' })?.field).toBe('description');
    expect(formTextProblem({ description: 'a\nb' }, new Set(['description']))).toBeUndefined();
    expect(formTextProblem(undefined)).toBeUndefined();
  });
});

describe('metadata keys', () => {
  it.each(['a.b', '.', '$set', 'a$', '', 'x'.repeat(41), 'with space', 'a\u0000'])('refuses %p', (key) => {
    expect(metadataKeyProblem(key)).toEqual({
      field: `metadata.${JSON.stringify(key).slice(1, -1)}`,
      message: 'metadata keys are 1 to 40 letters, digits, "_" or "-" (no "." or "$")',
    });
  });

  it.each(['order', 'seat_1', 'plan-tier', 'x'.repeat(40)])('takes %p', (key) => {
    expect(metadataKeyProblem(key)).toBeUndefined();
  });
});
