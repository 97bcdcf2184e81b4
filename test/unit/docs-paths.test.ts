import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';

// Every file path the docs name exists: a rename that forgets the docs fails here.
const root = join(__dirname, '../..');
const TOP = ['gateway', 'services', 'packages', 'scripts', 'deploy', 'test', 'proto', 'docs', 'examples', '.ci'];
/** Files at the top level the docs name by themselves. */
const TOP_FILES = ['components.json', 'docker-compose.yml', 'package.json', 'biome.json', 'tsconfig.json'];

/** Made on the operator's machine (git-ignored), so absent from a checkout. */
const GENERATED = ['deploy/secrets/'];

const tracked = (...patterns: string[]) =>
  execFileSync('git', ['ls-files', ...patterns], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);

const folderOf = (file: string) => (file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '.');

/** Every Markdown file of the repository: README.md, docs/, and the READMEs of deploy/, packages and examples. */
const docs = tracked('*.md');

/** Paths in `code spans` and in relative markdown links that start at one of the top-level folders. */
function namedPaths(markdown: string, from: string): string[] {
  const out = new Set<string>();
  for (const m of markdown.matchAll(/`([^`\s]+)`/g)) out.add(m[1]);
  for (const m of markdown.matchAll(/\]\((?!https?:|#|mailto:)([^)\s#]+)/g))
    out.add(join(from, m[1]).replace(/^\.\//, ''));
  return [...out]
    .map((p) => p.replace(/[:,.;]+$/, '').replace(/^\.\//, ''))
    .filter((p) => TOP_FILES.includes(p) || TOP.some((t) => p === t || p.startsWith(`${t}/`)))
    .filter((p) => !/[*{}<>$…]|\.\.\./.test(p)) // patterns and placeholders name no single file
    .filter((p) => !GENERATED.some((g) => p.startsWith(g)));
}

describe.each(docs)('%s', (doc) => {
  it('names only files and folders that exist', () => {
    const missing = namedPaths(readFileSync(join(root, doc), 'utf8'), folderOf(doc)).filter(
      (p) => !existsSync(join(root, p)),
    );
    expect(missing).toEqual([]);
  });
});

it('the check sees the paths the docs name', () => {
  const named = docs.flatMap((d) => namedPaths(readFileSync(join(root, d), 'utf8'), folderOf(d)));
  expect(named.length).toBeGreaterThan(30);
  expect(named).toEqual(expect.arrayContaining(['docs/architecture.md', 'components.json', 'deploy/Dockerfile']));
  expect(docs).toEqual(expect.arrayContaining(['README.md', 'docs/operations.md', 'deploy/README.md']));
});

/** A repository path with an extension, as code and comments name files: scripts/lib/net.ts, docs/api.md. */
const FILE_PATH = new RegExp(
  `(?<![\\w./-])(?:${TOP.filter((t) => !t.startsWith('.')).join('|')})/[\\w./-]+\\.(?:ts|mjs|js|md|ya?ml|sh|json|proto|conf)\\b`,
  'g',
);

it('code and comments name only files that exist (built dist/ output aside)', () => {
  const files = tracked('*.ts', '*.mjs', '*.js', '*.yaml', '*.yml', '*.sh', 'deploy/Dockerfile').filter(
    (f) => !f.startsWith('proto/gen/') && !f.includes('/generated/'),
  );
  const missing: string[] = [];
  let seen = 0;
  for (const f of files) {
    for (const [path] of readFileSync(join(root, f), 'utf8').matchAll(FILE_PATH)) {
      if (path.includes('/dist/')) continue;
      seen++;
      if (!existsSync(join(root, path))) missing.push(`${f}: ${path}`);
    }
  }
  expect(missing).toEqual([]);
  expect(seen).toBeGreaterThan(50); // the pattern still finds the paths
});

it('every package.json points at files that exist (types and main; main once built)', () => {
  const missing: string[] = [];
  for (const pkgFile of tracked('package.json', '*/package.json')) {
    const dir = folderOf(pkgFile);
    const pkg = JSON.parse(readFileSync(join(root, pkgFile), 'utf8')) as { types?: string; main?: string };
    for (const path of [pkg.types, pkg.main]) {
      // Built files (dist/) exist only after `npm run build`, which the test run does first.
      if (path && !existsSync(join(root, dir, path))) missing.push(`${pkgFile}: ${path}`);
    }
  }
  expect(missing).toEqual([]);
});
