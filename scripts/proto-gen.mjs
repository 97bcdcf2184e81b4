// Regenerates proto/gen from the .proto files with npm-installed tools only
// (buf + protoc-gen-ts_proto). With --check, fails if the committed code differs.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, cpSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const protoDir = join(root, 'proto');
const buf = join(root, 'node_modules', '.bin', 'buf');
const check = process.argv.includes('--check');

function files(dir, prefix = '') {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p, `${prefix}${name}/`) : [`${prefix}${name}`];
  });
}

if (!check) {
  rmSync(join(protoDir, 'gen'), { recursive: true, force: true });
  execFileSync(buf, ['generate'], { cwd: protoDir, stdio: 'inherit' });
  console.log('proto/gen regenerated');
} else {
  const tmp = mkdtempSync(join(tmpdir(), 'proto-check-'));
  try {
    cpSync(protoDir, tmp, { recursive: true, filter: (s) => !s.includes('/gen') && !s.includes('/dist') });
    // buf.gen.yaml names the plugin relative to proto/; point it at this checkout's node_modules.
    execFileSync(
      buf,
      [
        'generate',
        '--template',
        JSON.stringify({
          version: 'v2',
          plugins: [
            {
              local: join(root, 'node_modules/.bin/protoc-gen-ts_proto'),
              out: 'gen',
              strategy: 'all',
              opt: readFileSync(join(protoDir, 'buf.gen.yaml'), 'utf8')
                .split('\n')
                .filter((l) => l.trim().startsWith('- ') && l.includes('='))
                .map((l) => l.trim().slice(2)),
            },
          ],
        }),
      ],
      { cwd: tmp, stdio: 'inherit' },
    );
    const want = files(join(tmp, 'gen')).sort();
    const have = files(join(protoDir, 'gen')).sort();
    const stale = want.filter(
      (f) =>
        !have.includes(f) ||
        readFileSync(join(tmp, 'gen', f), 'utf8') !== readFileSync(join(protoDir, 'gen', f), 'utf8'),
    );
    const extra = have.filter((f) => !want.includes(f));
    if (stale.length || extra.length) {
      console.error(`proto/gen is out of date (${[...stale, ...extra].join(', ')}): run npm run proto:gen and commit.`);
      process.exit(1);
    }
    console.log('proto/gen matches the .proto files');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
