// The small builders every response schema is written with.

export type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
export const str = (description?: string, extra: Schema = {}): Schema => ({
  type: 'string',
  ...(description ? { description } : {}),
  ...extra,
});
export const orNull = (schema: Schema): Schema => ({ anyOf: [schema, { type: 'null' }] });
export const time = (description?: string) => str(description, { format: 'date-time' });
export const int = (description?: string, extra: Schema = {}): Schema => ({
  type: 'integer',
  ...(description ? { description } : {}),
  ...extra,
});
export const obj = (
  properties: Record<string, Schema>,
  required: string[] = Object.keys(properties),
  extra: Schema = {},
): Schema => ({ type: 'object', properties, required, additionalProperties: false, ...extra });
