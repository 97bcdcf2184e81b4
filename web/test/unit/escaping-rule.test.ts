import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

// Every page of the web component is written with html`…` (re-exported by src/kit/template.ts from
// @licensing/runtime), which escapes what it is given unless it is Html: a value reaches a page
// unescaped only through trustedHtml(). test/repository/html-escaping.test.ts keeps every component
// free of escape functions of its own and of hono's templates underneath; this checks what only pages
// must keep to: no markup built as a plain string (it would be escaped as text, or tempt a raw send),
// and no page sent but through sendPage().

const src = resolve(__dirname, '..', '..', 'src');
/** The web's entry to the templates, and the one module that sends pages. */
const TEMPLATE = 'kit/template.ts';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

const sources = filesUnder(src)
  .map((path) => ({ name: relative(src, path).split(sep).join('/'), code: readFileSync(path, 'utf8') }))
  .filter((f) => f.name !== TEMPLATE);

/** A literal of the source: quoted or a template's text (its ${…} parts left out), and whether html`…` tags it. */
interface Literal {
  text: string;
  tagged: boolean;
  line: number;
}

/**
 * The string and template literals of TypeScript source, skipping comments and regular expressions
 * (a regex is recognised by what precedes its slash, which is enough for this code base's style).
 */
function literalsOf(code: string): Literal[] {
  const out: Literal[] = [];
  // Open templates: the text gathered so far, and the brace depth of each ${…} entered.
  const templates: { text: string; tagged: boolean; line: number; depth: number }[] = [];
  let depth = 0;
  let line = 1;
  let lastSignificant = '';
  let i = 0;
  const readTemplateText = () => {
    const t = templates[templates.length - 1];
    while (i < code.length) {
      const c = code[i];
      if (c === '\\') {
        t.text += code.slice(i, i + 2);
        i += 2;
      } else if (c === '`') {
        i++;
        templates.pop();
        out.push({ text: t.text, tagged: t.tagged, line: t.line });
        lastSignificant = '`';
        return;
      } else if (c === '$' && code[i + 1] === '{') {
        i += 2;
        t.depth = ++depth;
        lastSignificant = '{';
        return;
      } else {
        if (c === '\n') line++;
        t.text += c;
        i++;
      }
    }
  };
  while (i < code.length) {
    const c = code[i];
    if (c === '\n') line++;
    if (c === '/' && code[i + 1] === '/') {
      i = code.indexOf('\n', i);
      if (i < 0) break;
    } else if (c === '/' && code[i + 1] === '*') {
      const end = code.indexOf('*/', i + 2);
      line += code.slice(i, end).split('\n').length - 1;
      i = end + 2;
    } else if (c === '/' && (lastSignificant === '' || '(,=:[!&|?{};'.includes(lastSignificant))) {
      // A regular expression: skip to its closing slash (classes may hold a slash).
      let inClass = false;
      for (i++; i < code.length; i++) {
        if (code[i] === '\\') i++;
        else if (code[i] === '[') inClass = true;
        else if (code[i] === ']') inClass = false;
        else if (code[i] === '/' && !inClass) break;
      }
      i++;
      lastSignificant = '/';
    } else if (c === "'" || c === '"') {
      let text = '';
      for (i++; i < code.length && code[i] !== c; i++) {
        if (code[i] === '\\') text += code[i++];
        text += code[i];
      }
      i++;
      out.push({ text, tagged: false, line });
      lastSignificant = c;
    } else if (c === '`') {
      const tagged = /\bhtml\s*$/.test(code.slice(Math.max(0, i - 10), i));
      templates.push({ text: '', tagged, line, depth: -1 });
      i++;
      readTemplateText();
    } else if (c === '{') {
      depth++;
      lastSignificant = c;
      i++;
    } else if (c === '}') {
      const t = templates[templates.length - 1];
      if (t && t.depth === depth) {
        depth--;
        i++;
        t.depth = -1;
        readTemplateText();
      } else {
        depth--;
        lastSignificant = c;
        i++;
      }
    } else {
      if (!/\s/.test(c)) lastSignificant = c;
      i++;
    }
  }
  return out;
}

/** Markup: a start or end tag, or a doctype. */
const MARKUP = /<\/?[a-zA-Z][^<>]*>|<!doctype/i;

describe('web pages escape by default', () => {
  it('finds the literals of a source, tagged or not (the scanner this test relies on)', () => {
    const found = literalsOf(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: TypeScript source is the scanner's input
      'const a = html`<p>${x ? `<b>${y}</b>` : \'<i>\'}</p>`; // `<u>` in a comment\nconst r = /[\'"`<]/g; const s = "<em>";',
    );
    expect(found.map((l) => [l.text, l.tagged])).toEqual([
      ['<b></b>', false],
      ['<i>', false],
      ['<p></p>', true],
      ['<em>', false],
    ]);
  });

  it('builds markup only with html`…`: no tag in a plain string or an untagged template', () => {
    const plain = sources.flatMap((f) =>
      literalsOf(f.code)
        .filter((l) => !l.tagged && MARKUP.test(l.text))
        .map((l) => `${f.name}:${l.line}: ${l.text.slice(0, 60)}`),
    );
    expect(plain).toEqual([]);
  });

  it('sends pages only through sendPage() (Express would send the Html object as JSON)', () => {
    const raw = sources.filter((f) => /\.type\(\s*['"](?:html|text\/html)['"]\s*\)/.test(f.code)).map((f) => f.name);
    expect(raw).toEqual([]);
  });
});
