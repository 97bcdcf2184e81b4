import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';

// Every file path the docs name exists: a rename that forgets the docs fails here.
const root = join(__dirname, '../..');
const TOP = ['gateway', 'services', 'packages', 'scripts', 'deploy', 'test', 'proto', 'docs', 'examples', '.ci'];

/** Made on the operator's machine (git-ignored), so absent from a checkout. */
const GENERATED = ['deploy/secrets/'];

const docs = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** Paths in `code spans` and in relative markdown links that start at one of the top-level folders. */
function namedPaths(markdown: string, from: string): string[] {
  const out = new Set<string>();
  for (const m of markdown.matchAll(/`([^`\s]+)`/g)) out.add(m[1]);
  for (const m of markdown.matchAll(/\]\((?!https?:|#|mailto:)([^)\s#]+)/g))
    out.add(join(from, m[1]).replace(/^\.\//, ''));
  return [...out]
    .map((p) => p.replace(/[:,.;]+$/, '').replace(/^\.\//, ''))
    .filter((p) => TOP.some((t) => p === t || p.startsWith(`${t}/`)))
    .filter((p) => !/[*{}<>$…]|\.\.\./.test(p)) // patterns and placeholders name no single file
    .filter((p) => !GENERATED.some((g) => p.startsWith(g)));
}

describe.each(docs)('%s', (doc) => {
  it('names only files and folders that exist', () => {
    const from = doc.includes('/') ? doc.slice(0, doc.lastIndexOf('/')) : '.';
    const missing = namedPaths(readFileSync(join(root, doc), 'utf8'), from).filter((p) => !existsSync(join(root, p)));
    expect(missing).toEqual([]);
  });
});

it('the check sees the paths the docs name', () => {
  const named = docs.flatMap((d) => namedPaths(readFileSync(join(root, d), 'utf8'), d.includes('/') ? 'docs' : '.'));
  expect(named.length).toBeGreaterThan(30);
  expect(named).toContain('docs/architecture.md');
});

it('code comments name only docs that exist', () => {
  const files = execFileSync('git', ['ls-files', '*.ts', '*.mjs', '*.yaml', '*.yml', '*.sh'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\n')
    .filter(Boolean);
  const missing: string[] = [];
  for (const f of files) {
    for (const m of readFileSync(join(root, f), 'utf8').matchAll(/\bdocs\/[A-Za-z0-9_-]+\.md\b/g))
      if (!existsSync(join(root, m[0]))) missing.push(`${f}: ${m[0]}`);
  }
  expect(missing).toEqual([]);
});
