import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { commonSchema, serviceSchema } from '@licensing/runtime';
import { root } from '../support/repo-paths';

// Every component has a README of its own that says how to run its tests alone, and names each setting
// its config schema adds to the shared ones (those are named once, in packages/runtime's README and
// docs/operations.md): a setting added without a word in its component's README fails here.

interface Registered {
  name: string;
  folder: string;
}

const registered: Registered[] = JSON.parse(readFileSync(join(root, 'components.json'), 'utf8')).components;
/** The components that are no process of their own, and so not in components.json. */
const PACKAGES = ['packages/runtime', 'packages/client', 'proto'];
const folders = [...registered.map((c) => c.folder), ...PACKAGES];

const readmeOf = (folder: string) => readFileSync(join(root, folder, 'README.md'), 'utf8');

/** The settings a component's config.ts declares beyond those every component or service shares. */
function ownSettings(folder: string): string[] {
  const file = join(root, folder, 'src', 'config.ts');
  if (!existsSync(file)) return [];
  const shared = new Set([...Object.keys(commonSchema), ...Object.keys(serviceSchema('any', 0))]);
  const schemas = Object.entries(require(file) as Record<string, unknown>).filter(
    ([name, value]) => name.endsWith('Schema') && typeof value === 'object' && value !== null,
  );
  return schemas.flatMap(([, schema]) => Object.keys(schema as object)).filter((name) => !shared.has(name));
}

it('knows every component', () => {
  expect(folders).toEqual(expect.arrayContaining(['gateway', 'services/license', 'packages/runtime', 'proto']));
});

describe.each(folders)('%s/README.md', (folder) => {
  it('exists and says how to run the component’s tests alone, and the unit tier', () => {
    expect(existsSync(join(root, folder, 'README.md'))).toBe(true);
    expect(readmeOf(folder)).toContain(`npm test -w ${folder}`);
    expect(readmeOf(folder)).toContain('npm run test:unit');
  });

  it('names every setting of the component’s own schema', () => {
    const readme = readmeOf(folder);
    expect(ownSettings(folder).filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
  });
});

it('reads the settings of a schema (the check is not vacuous)', () => {
  expect(ownSettings('services/license')).toEqual(expect.arrayContaining(['PRODUCT_GRPC_ADDR', 'EXPORT_LEASE_MS']));
  expect(ownSettings('gateway')).toEqual(expect.arrayContaining(['VALIDATION_CACHE_SIZE', 'REDIS_URL']));
  expect(ownSettings('services/license')).not.toContain('GRPC_PORT');
});
