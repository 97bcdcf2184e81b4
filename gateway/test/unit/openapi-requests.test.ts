import Ajv2020 from 'ajv/dist/2020';
import fc from 'fast-check';
import { openApiDocument } from '../../src/openapi/document';
import { everyRoute } from '../../../test/support/routes';
import { queryParameters, toJsonSchema } from '../../src/openapi/shape-schema';
import { readBody, type Field, type Shape } from '../../src/request-shapes/shapes';

// The document's request schemas and the gateway's request validation are one
// thing: for every route registered through route(), the body and query the
// document describes are exactly those generated from the shapes the route
// validates with, and a body is accepted by the validation exactly when the
// document's schema accepts it.

type Json = Record<string, any>;
const doc = openApiDocument('test') as unknown as Json;
const registeredRoutes = everyRoute();

const operations = [...registeredRoutes].flatMap(([path, methods]) =>
  [...methods].map(([method, shapes]) => {
    const template = `/api/v1${path.replace(/:(\w+)/g, '{$1}')}`;
    return { name: `${method.toUpperCase()} ${template}`, op: doc.paths[template]?.[method] as Json, shapes };
  }),
);

/** The schema with every $ref replaced by what it names. */
function inline(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(inline);
  if (typeof schema !== 'object' || schema === null) return schema;
  const { $ref, ...rest } = schema as Json;
  const target = $ref ? inline(doc.components.schemas[String($ref).split('/').pop()!]) : {};
  return { ...(target as Json), ...Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, inline(v)])) };
}
const documentedBody = (op: Json) => op.requestBody?.content?.['application/json']?.schema;
const documentedQuery = (op: Json) => ((op.parameters ?? []) as Json[]).filter((p) => p.in === 'query');

describe('request schemas of the OpenAPI document', () => {
  it('cover operations with a body and with a query string', () => {
    expect(operations.filter((o) => o.shapes.body).length).toBeGreaterThanOrEqual(10);
    expect(operations.filter((o) => o.shapes.query).length).toBeGreaterThanOrEqual(6);
  });

  it.each(operations.map((o) => [o.name, o]))('%s: the documented body is the one its route validates', (_, o) => {
    expect(o.op).toBeDefined();
    if (!o.shapes.body) expect(documentedBody(o.op)).toBeUndefined();
    else expect(inline(documentedBody(o.op))).toEqual(toJsonSchema(o.shapes.body));
  });

  it.each(operations.map((o) => [o.name, o]))('%s: the documented query is the one its route validates', (_, o) => {
    expect(documentedQuery(o.op)).toEqual(o.shapes.query ? queryParameters(o.shapes.query) : []);
  });
});

// For each field: a good value, values at and past its limits, and values of every other JSON type.
function valueFor(field: Field, depth: number): fc.Arbitrary<unknown> {
  const other = fc.oneof(
    fc.constantFrom(null, true, 0, -1, 1.5, 2 ** 53, '', ' ', 'x', [], {}, ['x'], { a: 'b' }),
    fc.jsonValue({ maxDepth: 1 }),
  );
  // Refused characters (text.ts) agree too: controls, line breaks (allowed in multi-line fields only),
  // a lone surrogate, noncharacters; beside text that only looks odd (an emoji, a non-breaking space).
  const odd = [
    'a\u0000',
    '\u0000',
    'a\tb',
    'two\nlines',
    'cr\r',
    '\u007f',
    '\u0085',
    '\ud800x',
    'x\udfff',
    '\ufffe',
    '\ufdd0',
    '😀',
    '\u00a0x',
  ];
  const text = (max: number) =>
    fc.oneof(
      fc.string({ maxLength: 4 }),
      fc.constantFrom(' \t', 'x'.repeat(max), 'x'.repeat(max + 1), ` ${'x'.repeat(max - 1)}`, ...odd),
    );
  const orNull = (a: fc.Arbitrary<unknown>, nullable?: boolean) => (nullable ? fc.oneof(a, fc.constant(null)) : a);
  let good: fc.Arbitrary<unknown>;
  let near: fc.Arbitrary<unknown>;
  switch (field.kind) {
    case undefined:
    case 'string':
      good = fc.constantFrom('x', 'a b', 'x'.repeat(field.max));
      near = text(field.max);
      break;
    case 'enum':
      good = fc.constantFrom(...field.values);
      near = fc.constantFrom(`${field.values[0]} `, field.values[0].toUpperCase(), '');
      break;
    case 'int':
      good = orNull(fc.integer({ min: field.min, max: field.max }), field.nullable);
      near = fc.constantFrom(field.min - 1, field.min, field.max, field.max + 1, field.min + 0.5, -0);
      break;
    case 'bool':
      good = fc.boolean();
      near = fc.constantFrom('true', 0);
      break;
    case 'object':
      good = orNull(depth > 2 ? fc.constant({}) : bodyFor(field.shape, depth + 1), field.nullable);
      near = fc.constantFrom([], 'x', null);
      break;
    case 'map':
      good = fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 }), { maxKeys: 3 });
      near = fc.oneof(
        fc.dictionary(fc.constantFrom('a.b', '$set', 'ok_key', 'k-1', '', 'x'.repeat(41), 'a\u0000'), text(5), {
          maxKeys: 2,
        }),
        fc.dictionary(fc.string({ maxLength: 3 }), other, { maxKeys: 2 }),
        fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), fc.constant('v'), {
          minKeys: field.maxEntries,
          maxKeys: field.maxEntries + 1,
        }),
      );
      break;
    case 'list':
      good = fc.array(fc.constantFrom('e', '*'), { minLength: 1, maxLength: 3 });
      near = fc.oneof(
        fc.array(text(field.maxLength), { maxLength: 3 }),
        fc.array(fc.constant('e'), { minLength: field.maxItems, maxLength: field.maxItems + 1 }),
        fc.array(other, { maxLength: 2 }),
      );
      break;
    case 'entitlements':
      good = fc.uniqueArray(fc.constantFrom('pdf-export', 'seats.10', 'a', '0_x'), { maxLength: 4 });
      near = fc.oneof(
        fc.array(fc.constantFrom('PDF', '-x', 'a b', '', 'x'.repeat(65), 'ok'), { maxLength: 3 }),
        fc.constant(['a', 'a']),
        fc.constant(Array.from({ length: 101 }, (_, i) => `c${i}`)),
        fc.array(other, { maxLength: 2 }),
      );
      break;
    case 'objects':
      good = fc.array(depth > 2 ? fc.constant({}) : bodyFor(field.shape, depth + 1), {
        minLength: field.minItems,
        maxLength: 3,
      });
      near = fc.oneof(
        fc.constantFrom([], {}, 'x', null),
        fc.array(other, { minLength: 1, maxLength: 2 }),
        fc.constant(Array.from({ length: field.maxItems + 1 }, () => ({}))),
      );
      break;
  }
  return fc.oneof({ weight: 12, arbitrary: good }, { weight: 2, arbitrary: near }, { weight: 1, arbitrary: other });
}

/** Mostly with every required field; sometimes with an unknown one (parsed as express.json() would). */
function bodyFor(shape: Shape, depth = 0): fc.Arbitrary<Json> {
  const fields = Object.fromEntries(Object.entries(shape).map(([name, field]) => [name, valueFor(field, depth)]));
  const required = Object.keys(shape).filter((name) => shape[name].required);
  return fc
    .tuple(
      fc.oneof(
        { weight: 9, arbitrary: fc.record(fields, { requiredKeys: required }) },
        { weight: 1, arbitrary: fc.record(fields, { requiredKeys: [] }) },
      ),
      fc.oneof(
        { weight: 9, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom('colour', '__proto__', 'constructor', 'toString') },
      ),
    )
    .map(([body, extra]) => {
      if (!extra) return body;
      const inner = JSON.stringify(body).slice(1, -1);
      return JSON.parse(`{"${extra}":1${inner ? `,${inner}` : ''}}`);
    });
}

describe('validation and document agree on every body', () => {
  const ajv = new Ajv2020({ strict: false });
  // Lengths: the gateway (like the services) counts UTF-16 code units, JSON Schema counts code points;
  // the bodies here stay within the Basic Multilingual Plane, where both are the same.
  it.each(operations.filter((o) => o.shapes.body).map((o) => [o.name, o]))('%s', (_, o) => {
    const shape = o.shapes.body!;
    const documented = ajv.compile(inline(documentedBody(o.op)) as Json);
    let accepted = 0;
    fc.assert(
      fc.property(bodyFor(shape), (body) => {
        let validated = true;
        try {
          readBody({ body } as never, shape);
        } catch {
          validated = false;
        }
        expect({ body, validated }).toEqual({ body, validated: documented(body) });
        if (validated) accepted++;
      }),
      { numRuns: 400, seed: 19 },
    );
    // Both answers were exercised, not only refusals.
    expect(accepted).toBeGreaterThan(20);
    expect(accepted).toBeLessThan(380);
  });
});
