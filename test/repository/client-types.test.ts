import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDocument } from '../../gateway/src/openapi/document';

// A second guard beside `scripts/client-types.mjs --check` (which npm test runs
// before jest and which compares the whole file): the SDK's committed types name
// every path, operation, schema and schema property of the gateway's document.

type Json = Record<string, any>;
const doc = openApiDocument('test') as unknown as Json;
const generated = readFileSync(join(__dirname, '../../packages/client/src/generated/openapi.ts'), 'utf8');

/** The text of `name: { … }` at the given indentation in the generated file. */
function block(name: string, indent: string): string | undefined {
  const start = generated.indexOf(`\n${indent}${name}: {\n`);
  if (start < 0) return undefined;
  const end = generated.indexOf(`\n${indent}};`, start);
  return generated.slice(start, end);
}

it('has every path and operation of the document', () => {
  for (const [path, methods] of Object.entries(doc.paths as Json)) {
    expect(generated).toContain(`\n    "${path}": {\n`);
    for (const op of Object.values(methods as Json)) expect(block((op as Json).operationId, '    ')).toBeDefined();
  }
});

it('has every enum schema with exactly its values', () => {
  for (const [name, schema] of Object.entries(doc.components.schemas as Json)) {
    if (!schema.enum) continue;
    const line = new RegExp(`\\n {8}${name}: (.+);\\n`).exec(generated)?.[1] ?? '';
    expect({
      name,
      values: line
        .split(' | ')
        .map((v) => JSON.parse(v))
        .sort(),
    }).toEqual({ name, values: [...schema.enum].sort() });
  }
});

it('has every object schema with exactly its properties, required ones without "?"', () => {
  for (const [name, schema] of Object.entries(doc.components.schemas as Json)) {
    if (schema.enum) continue;
    if (!Object.keys(schema.properties ?? {}).length) {
      expect(generated).toContain(`\n        ${name}: Record<string, never>;\n`);
      continue;
    }
    const text = block(name, '        ');
    expect({ name, found: text !== undefined }).toEqual({ name, found: true });
    for (const prop of Object.keys(schema.properties ?? {})) {
      const required = (schema.required ?? []).includes(prop);
      expect({ schema: name, prop, line: new RegExp(`\\n {12}${prop}${required ? '' : '\\?'}: `).test(text!) }).toEqual(
        { schema: name, prop, line: true },
      );
    }
    const declared = [...text!.matchAll(/\n {12}(\w+)\??: /g)].map((m) => m[1]);
    expect({ schema: name, props: declared.sort() }).toEqual({
      schema: name,
      props: Object.keys(schema.properties ?? {}).sort(),
    });
  }
});
