// MongoDB filters as SQL over FerretDB's PostgreSQL tables, for the page and
// count queries in pages.ts. FerretDB 1.24 stores a document as one jsonb
// column, `_jsonb`: strings as JSON strings, dates as milliseconds since the
// epoch (JSON numbers), null as JSON null. Only the subset our stores send is
// translated, with MongoDB's meaning for scalar fields:
//   {f: v}, {f: null} (null or missing), {f: {$eq|$ne|$lt|$lte|$gt|$gte: v}},
//   {$or: [...]}, {$and: [...]}, with v a string, number, boolean or Date.
// Anything else (dotted paths, $in, $exists, arrays, regexes) answers null, and
// the caller asks FerretDB instead: slower at size, never wrong.

const FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RANGE: Record<string, string> = { $lt: '<', $lte: '<=', $gt: '>', $gte: '>=' };

/** `_jsonb -> 'field'`; field names are checked against FIELD before they get here. */
export const jsonbField = (field: string) => `(_jsonb -> '${field}')`;

/** A string field as text in byte order, as MongoDB compares strings (and as the page indexes are built). */
export const textField = (field: string) => `((_jsonb ->> '${field}') COLLATE "C")`;

type Scalar = string | number | boolean | Date;

const isScalar = (v: unknown): v is Scalar =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)) || v instanceof Date;

const asJson = (v: Scalar) => JSON.stringify(v instanceof Date ? v.getTime() : v);

/** Builds the WHERE text, pushing parameters onto `params` ($1, $2, ...). */
export function sqlWhere(filter: Record<string, unknown>, params: unknown[]): string | null {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$or' || key === '$and') {
      if (!Array.isArray(value) || value.length === 0) return null;
      const branches: string[] = [];
      for (const branch of value) {
        if (!branch || typeof branch !== 'object') return null;
        const sql = sqlWhere(branch as Record<string, unknown>, params);
        if (sql === null) return null;
        branches.push(sql);
      }
      parts.push(`(${branches.join(key === '$or' ? ' OR ' : ' AND ')})`);
      continue;
    }
    if (!FIELD.test(key)) return null;
    const sql = fieldCondition(key, value, params);
    if (sql === null) return null;
    parts.push(sql);
  }
  return parts.length ? parts.join(' AND ') : 'TRUE';
}

function fieldCondition(field: string, value: unknown, params: unknown[]): string | null {
  const json = jsonbField(field);
  const param = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  if (value === null) return `(${json} IS NULL OR ${json} = 'null'::jsonb)`;
  if (isScalar(value)) return `${json} = ${param(asJson(value))}::jsonb`;
  if (typeof value !== 'object' || Array.isArray(value)) return null;
  const parts: string[] = [];
  for (const [op, operand] of Object.entries(value as Record<string, unknown>)) {
    if (op === '$eq') {
      const sql = fieldCondition(field, operand, params);
      if (sql === null) return null;
      parts.push(sql);
    } else if (op === '$ne') {
      if (operand === null) parts.push(`(${json} IS NOT NULL AND ${json} <> 'null'::jsonb)`);
      else if (isScalar(operand)) parts.push(`(${json} IS NULL OR ${json} <> ${param(asJson(operand))}::jsonb)`);
      else return null;
    } else if (op in RANGE) {
      // MongoDB compares only within a type: a string bound matches strings, a date or number bound numbers here.
      if (typeof operand === 'string')
        parts.push(`(jsonb_typeof(${json}) = 'string' AND ${textField(field)} ${RANGE[op]} ${param(operand)})`);
      else if (operand instanceof Date || (typeof operand === 'number' && Number.isFinite(operand)))
        // CASE, not AND: SQL does not promise to test the type before the cast, and null cannot be cast.
        parts.push(
          `(CASE WHEN jsonb_typeof(${json}) = 'number' THEN (${json})::numeric ${RANGE[op]} ${param(operand instanceof Date ? operand.getTime() : operand)} ELSE false END)`,
        );
      else return null;
    } else return null;
  }
  return parts.length ? parts.join(' AND ') : null;
}
