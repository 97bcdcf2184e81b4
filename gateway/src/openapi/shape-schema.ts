import { ENTITLEMENT_CODE_MAX_LENGTH, ENTITLEMENT_CODE_PATTERN, MAX_ENTITLEMENTS } from '@licensing/proto';
import { forbiddenTextClass, METADATA_KEY_PATTERN } from '@licensing/runtime';
import type { Field, ObjectField, QueryShape, Shape } from '../request-shapes/shapes';

// The JSON Schema (2020-12) of what a request shape accepts: the OpenAPI
// document's request bodies and query parameters are generated here from the
// shapes the routes validate with, so the two cannot say different things.
// Each constraint below mirrors one check in validation.ts.

type Schema = Record<string, unknown>;

export interface SchemaOptions {
  /** Objects that name a component become $refs to it (the document); else they are written out (comparisons). */
  refs?: boolean;
}

/** Text without the refused control characters (text.ts); `required` text also has a non-space character. */
export function textPattern(multiline: boolean | undefined, required: boolean | undefined): string {
  const bad = forbiddenTextClass(multiline);
  return required ? `^[^${bad}]*[^\\s${bad}][^${bad}]*$` : `^[^${bad}]*$`;
}

const orNull = (schema: Schema, nullable: boolean | undefined): Schema =>
  nullable ? { anyOf: [schema, { type: 'null' }] } : schema;

/** A list of entitlement codes (proto/rules/entitlements.ts), as requests send it and answers show it. */
export const entitlementsSchema: Schema = {
  type: 'array',
  items: { type: 'string', pattern: ENTITLEMENT_CODE_PATTERN, maxLength: ENTITLEMENT_CODE_MAX_LENGTH },
  maxItems: MAX_ENTITLEMENTS,
  uniqueItems: true,
};

/** A field's schema without its description (query parameters carry that themselves). */
function bareSchema(field: Field, options: SchemaOptions): Schema {
  switch (field.kind) {
    case undefined:
    case 'string':
      // Required text must not be blank (validation trims it first); no text holds control characters.
      // A time is checked as one by the owning service: here, text as any other (the format says what it means).
      return orNull(
        {
          ...(field.required
            ? { type: 'string', minLength: 1, maxLength: field.max, pattern: textPattern(field.multiline, true) }
            : { type: 'string', maxLength: field.max, pattern: textPattern(field.multiline, false) }),
          ...(field.format ? { format: field.format } : {}),
        },
        field.nullable,
      );
    case 'enum':
      return field.nullable ? { enum: [...field.values, null] } : { enum: [...field.values] };
    case 'int': {
      const int = { type: 'integer', minimum: field.min, maximum: field.max };
      return orNull(field.default === undefined ? int : { ...int, default: field.default }, field.nullable);
    }
    case 'bool':
      return { type: 'boolean' };
    case 'object':
      return orNull(
        options.refs && field.component
          ? { $ref: `#/components/schemas/${field.component}` }
          : toJsonSchema(field.shape, options),
        field.nullable,
      );
    case 'map':
      return {
        type: 'object',
        propertyNames: { pattern: METADATA_KEY_PATTERN },
        additionalProperties: { type: 'string', pattern: textPattern(true, false) },
        maxProperties: field.maxEntries,
      };
    case 'list': {
      const list = {
        type: 'array',
        items: { type: 'string', maxLength: field.maxLength, pattern: textPattern(false, false) },
        maxItems: field.maxItems,
      };
      return field.required ? { ...list, minItems: 1 } : list;
    }
    case 'entitlements':
      return field.maxItems ? { ...entitlementsSchema, maxItems: field.maxItems } : entitlementsSchema;
    case 'objects':
      return {
        type: 'array',
        items: toJsonSchema(field.shape, options),
        minItems: field.minItems,
        maxItems: field.maxItems,
      };
  }
}

export function fieldSchema(field: Field, options: SchemaOptions = {}): Schema {
  const schema = bareSchema(field, options);
  return field.description ? { ...schema, description: field.description } : schema;
}

/** A closed object: the shape's fields, the required ones listed, nothing else. */
export function toJsonSchema(shape: Shape, options: SchemaOptions = {}): Schema {
  const required = Object.keys(shape).filter((name) => shape[name].required);
  return {
    type: 'object',
    properties: Object.fromEntries(Object.entries(shape).map(([name, field]) => [name, fieldSchema(field, options)])),
    ...(required.length ? { required } : {}),
    additionalProperties: false,
  };
}

/** The named objects inside these shapes, as components (the $ref targets of toJsonSchema with refs). */
export function componentSchemas(shapes: Shape[]): Record<string, Schema> {
  const found = new Map<string, ObjectField>();
  const walk = (shape: Shape) => {
    for (const field of Object.values(shape)) {
      if (field.kind !== 'object') continue;
      if (field.component) {
        const seen = found.get(field.component);
        if (seen && seen !== field) throw new Error(`two different objects are named ${field.component}`);
        found.set(field.component, field);
      }
      walk(field.shape);
    }
  };
  for (const shape of shapes) walk(shape);
  // The object itself, written out (not a $ref to itself), never null (uses say that).
  return Object.fromEntries(
    [...found].map(([name, field]) => [
      name,
      fieldSchema({ ...field, component: undefined, nullable: false }, { refs: true }),
    ]),
  );
}

/** OpenAPI query parameters, in the shape's order. */
export function queryParameters(shape: QueryShape): Schema[] {
  return Object.entries(shape).map(([name, field]) => ({
    name,
    in: 'query',
    required: field.required ?? false,
    ...(field.description ? { description: field.description } : {}),
    schema: bareSchema(field, {}),
  }));
}
