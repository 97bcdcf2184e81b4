import { join } from 'node:path';
import type { Schema } from '@licensing/runtime';
import { components, schemaExport, type Component } from '../../scripts/lib/components';

// Every component's config schema, from its sources, for each entry of
// components.json (`<folder>/src/config.ts` exports `<name>Schema`).
const root = join(__dirname, '..', '..');

export const schemas: Record<Component, Schema> = Object.fromEntries(
  components.map((c) => {
    const schema = (require(join(root, c.folder, 'src', 'config')) as Record<string, Schema>)[schemaExport(c)];
    if (!schema) throw new Error(`${c.folder}/src/config.ts does not export ${schemaExport(c)}`);
    return [c.name, schema];
  }),
);
