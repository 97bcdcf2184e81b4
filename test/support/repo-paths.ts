import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// The file paths the repository names about itself (in its Markdown and in package.json entries), for
// the checks that each exists. Paths into a built dist/ folder exist only after `npm run build`: the
// unit tier (run on a fresh clone, nothing built) checks that their source exists, and the deploy tier
// (which `npm test` runs after building) checks the built files themselves.

export const root = join(__dirname, '../..');
const TOP = ['gateway', 'services', 'packages', 'scripts', 'deploy', 'test', 'proto', 'docs', 'examples', '.ci'];
/** Files at the top level the docs name by themselves. */
const TOP_FILES = ['components.json', 'docker-compose.yml', 'package.json', 'biome.json', 'tsconfig.json'];

/** Made on the operator's machine (git-ignored), so absent from a checkout. */
const GENERATED = ['deploy/secrets/'];

export const tracked = (...patterns: string[]) =>
  execFileSync('git', ['ls-files', ...patterns], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);

export const folderOf = (file: string) => (file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '.');

/** Every Markdown file of the repository: README.md, docs/, and the READMEs of deploy/, packages and examples. */
export const docs = () => tracked('*.md');

/** Paths in `code spans` and in relative markdown links that start at one of the top-level folders. */
export function namedPaths(markdown: string, from: string): string[] {
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

/** The paths one Markdown file of the repository names. */
export const pathsNamedBy = (doc: string) => namedPaths(readFileSync(join(root, doc), 'utf8'), folderOf(doc));

/** The `types` and `main` entries of every package.json, as repository paths. */
export function packageEntries(): Array<{ manifest: string; path: string }> {
  return tracked('package.json', '*/package.json').flatMap((manifest) => {
    const pkg = JSON.parse(readFileSync(join(root, manifest), 'utf8')) as { types?: string; main?: string };
    return [pkg.types, pkg.main]
      .filter((p): p is string => !!p)
      .map((p) => ({ manifest, path: join(folderOf(manifest), p) }));
  });
}

/** Whether a path lies in a built dist/ folder (made by scripts/build.mjs, absent from a fresh clone). */
export const isBuilt = (path: string) => /(^|\/)dist(\/|$)/.test(path);

/**
 * The sources scripts/build.mjs could make a built path from: `X/dist/a/b.js` (or `.d.ts`, and the SDK's
 * `dist/esm/` and `dist/cjs/` copies) comes from `X/src/a/b.ts` or `X/a/b.ts` (proto and scripts keep
 * no src/ folder). A folder of dist/ comes from the same folder of the sources.
 */
export function sourcesOf(built: string): string[] {
  const [, workspace = '', rest = ''] = /^(?:(.*)\/)?dist(?:\/(.*))?$/.exec(built) ?? [];
  const inside = rest.replace(/^(esm|cjs)(\/|$)/, '');
  const stem = inside.replace(/\.d\.ts$|\.js$/, '');
  const candidates = stem === inside ? [stem] : [`${stem}.ts`];
  return candidates.flatMap((c) => [join(workspace, 'src', c), join(workspace, c)]);
}

/** A built path whose source is in the repository: what a build would make it from exists. */
export const buildsFromSource = (built: string) => sourcesOf(built).some((s) => existsSync(join(root, s)));
