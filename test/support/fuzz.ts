import { request as httpRequest } from 'node:http';
import fc from 'fast-check';

// Hostile requests generated from the served OpenAPI document (fast-check).
// Every documented operation is a target; each of its path parameters, query
// parameters, body fields, headers, content type, cookies and encodings is
// drawn from valid values (so requests get deep into the handlers) mixed with
// hostile ones (broken percent-encoding, truncated UTF-8, huge, wrong-typed).

type Json = Record<string, any>;

export interface Operation {
  method: string;
  template: string;
  operationId: string;
  params: Json[];
  bodySchema?: Json;
  /** The media types of a body that is a file, not JSON (POST /api/v1/imports: JSON lines, CSV). */
  fileTypes?: string[];
  /** The HTML pages (hosted checkout) answer text/html, not problem+json. */
  html: boolean;
  /** A page's form fields (its POST body is mostly a urlencoded form of these, with real or hostile values). */
  form?: string[];
  /** The lowest role that may call it (the document's x-required-role); absent for the public pages. */
  requiredRole?: string;
}

export interface FuzzRequest {
  op: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface FuzzResponse {
  status: number;
  contentType: string;
  text: string;
}

/** Every operation of the document, with every $ref of its request body replaced by what it names. */
export function operationsOf(doc: Json): Operation[] {
  const resolve = (s: unknown): any => {
    if (Array.isArray(s)) return s.map(resolve);
    if (typeof s !== 'object' || s === null) return s;
    const { $ref, ...rest } = s as Json;
    const target = $ref ? resolve(doc.components.schemas[String($ref).split('/').pop()!]) : {};
    return { ...target, ...Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, resolve(v)])) };
  };
  const ops: Operation[] = [];
  for (const [template, methods] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(methods)) {
      const content = op.responses?.['200']?.content ?? {};
      ops.push({
        method: method.toUpperCase(),
        template,
        operationId: op.operationId,
        params: op.parameters ?? [],
        bodySchema: resolve(op.requestBody?.content?.['application/json']?.schema),
        fileTypes: Object.keys(op.requestBody?.content ?? {}).filter((t) => t !== 'application/json'),
        html: 'text/html' in content && template.startsWith('/checkout'),
        requiredRole: op['x-required-role'],
      });
    }
  }
  return ops;
}

/**
 * Characters no field takes (the API's text rule): C0 controls, DEL, a C1 control, a lone surrogate
 * and noncharacters; tab, line feed and carriage return are refused in one-line fields only.
 */
export const CONTROL_CHARACTERS = [
  '\u0000',
  '\u0001',
  '\u001b',
  '\u001f',
  '\u007f',
  '\u0085',
  '\ud800',
  '\udfff',
  '\ufffe',
  '\uffff',
];
export const LINE_BREAKS = ['\t', '\n', '\r'];

/** Where a body takes text: a string field, an item of a list of strings, a map's values and its keys. */
export interface TextSlot {
  /** The field as the API names it in errors: `name`, `price.currency`, `events[0]`, `metadata.note`. */
  field: string;
  /** The body with `text` in that slot (and nothing else). */
  body: (text: string) => Json;
  /** Free text over several lines (the document's pattern lets a line feed through). */
  multiline: boolean;
}

/** Every place a (resolved) body schema takes text. */
export function textSlotsOf(schema: Json | undefined, path: string[] = []): TextSlot[] {
  if (!schema) return [];
  const s = schema.anyOf ? schema.anyOf.find((x: Json) => x.type !== 'null') : schema;
  const nest = (keys: string[], leaf: unknown): Json => {
    let v = leaf;
    for (const k of [...keys].reverse()) v = { [k]: v };
    return v as Json;
  };
  const takesLineFeed = (x: Json) => !x.pattern || new RegExp(x.pattern, 'u').test('a\nb');
  const name = path.join('.');
  switch (s.type) {
    case 'string':
      return [{ field: name, body: (t) => nest(path, t), multiline: takesLineFeed(s) }];
    case 'array':
      return s.items?.type === 'string'
        ? [{ field: `${name}[1]`, body: (t) => nest(path, ['license.created', t]), multiline: takesLineFeed(s.items) }]
        : [];
    case 'object':
      if (s.properties)
        return Object.entries(s.properties as Record<string, Json>).flatMap(([k, v]) => textSlotsOf(v, [...path, k]));
      if (s.additionalProperties?.type === 'string')
        return [
          {
            field: `${name}.note`,
            body: (t) => nest(path, { note: t }),
            multiline: takesLineFeed(s.additionalProperties),
          },
          { field: `${name}.`, body: (t) => nest(path, { [`k${t}`]: 'v' }), multiline: false },
        ];
      return [];
    default:
      return [];
  }
}

/** Inputs a test knows to be real (ids of its own account and another's, keys, secrets). */
export interface Known {
  apiKeys: string[];
  ids: string[];
  licenseKeys: string[];
  /** Real Cookie headers (a signed-in customer portal session with its CSRF cookie), so pages get past sign-in. */
  cookies?: string[];
  /** Real form values (the CSRF tokens of those sessions, a customer's e-mail). */
  formValues?: string[];
}

// Percent-encoded sequences that are not valid UTF-8 or not valid encoding at all.
const BROKEN_ENCODINGS = [
  '%ED%A0%80',
  '%E2%82',
  '%C3',
  '%FF',
  '%',
  '%%',
  '%zz',
  '%E0%A4%A',
  '%C0%AF',
  '%F4%90%80%80',
  '%ED%BF%BF',
];
const NASTY_SEGMENTS = [
  '..',
  '.',
  '%2e%2e',
  '%2F',
  '%00',
  '%0d%0a',
  'null',
  'undefined',
  '__proto__',
  'constructor',
  'validate',
  '%20',
  '-',
  '0',
  '-1',
  'NaN',
  '1e309',
  '%F0%9F%92%A9',
  '%E2%80%AE',
  '%01',
  '%1B',
  '%7F',
  '%C2%85',
  '%EF%BF%BE',
  'prod_%00',
  'cs_%00x',
  '%09',
  'cs_',
  'prod_',
  'lic_',
  'we_',
  'act_',
];

/** Printable ASCII that node's HTTP client accepts in a path and header values. */
const asciiString = (max: number) =>
  fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: max });
const pctEncoded = (max: number) => fc.string({ unit: 'binary', maxLength: max }).map((s) => encodeURIComponent(s));

/** A path segment or query value: real, near-real, broken or huge. */
function hostileValue(known: Known): fc.Arbitrary<string> {
  const real = fc.constantFrom(...known.ids, ...known.licenseKeys);
  return fc.oneof(
    { weight: 4, arbitrary: real.map(encodeURIComponent) },
    {
      weight: 2,
      arbitrary: fc.tuple(real, fc.nat()).map(([v, n]) => encodeURIComponent(v).slice(0, n % (v.length + 1))),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          fc.oneof(real.map(encodeURIComponent), asciiString(10).map(encodeURIComponent)),
          fc.constantFrom(...BROKEN_ENCODINGS),
          fc.boolean(),
        )
        .map(([v, bad, front]) => (front ? bad + v : v + bad)),
    },
    { weight: 2, arbitrary: fc.constantFrom(...NASTY_SEGMENTS) },
    { weight: 2, arbitrary: pctEncoded(40) },
    { weight: 1, arbitrary: fc.integer({ min: 65, max: 5000 }).map((n) => 'A'.repeat(n)) },
    // A long value cut in the middle of a UTF-8 sequence.
    {
      weight: 2,
      arbitrary: fc.integer({ min: 1, max: 300 }).map((n) => encodeURIComponent('é'.repeat(n)).slice(0, n * 6 - 3)),
    },
    { weight: 1, arbitrary: asciiString(30).map((s) => s.replace(/[/?#]/g, '')) },
  );
}

/** Body values by JSON schema: often valid, often not. */
function valueFor(schema: Json | undefined, known: Known, depth = 0): fc.Arbitrary<unknown> {
  const anything = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.double(),
    fc.integer(),
    fc.string({ maxLength: 20 }),
    fc.constant([]),
    fc.constant({}),
    fc.constant(2 ** 53 + 1),
    fc.constant(-0),
  );
  if (!schema || depth > 3) return anything;
  const s = schema.anyOf ? schema.anyOf[0] : schema;
  let good: fc.Arbitrary<unknown>;
  switch (s.type) {
    case 'string':
      good = fc.oneof(
        fc.constantFrom(
          ...known.ids,
          ...known.licenseKeys,
          'https://example.com/hook',
          'http://127.0.0.1:1/x',
          'http://[::ffff:127.0.0.1]/',
          'http://169.254.169.254/latest',
          'a@example.com',
          'usd',
          '*',
          'license.created',
          '',
        ),
        fc.string({ maxLength: (s.maxLength ?? 40) + 2, unit: 'grapheme' }),
        fc.string({ maxLength: 30, unit: 'binary' }),
        // Text with a control character (or a line break) somewhere in it.
        fc
          .tuple(
            fc.string({ maxLength: 10 }),
            fc.constantFrom(...CONTROL_CHARACTERS, ...LINE_BREAKS),
            fc.string({ maxLength: 10 }),
          )
          .map(([a, c, b]) => a + c + b),
        fc.integer({ min: 0, max: 70_000 }).map((n) => 'x'.repeat(n)),
      );
      break;
    case 'integer':
      good = fc.oneof(fc.integer({ min: -5, max: 400 }), fc.constantFrom(2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1.5, 1e308));
      break;
    case 'boolean':
      good = fc.boolean();
      break;
    case 'array':
      good = fc.array(valueFor(s.items, known, depth + 1), { maxLength: 60 });
      break;
    case 'object':
      if (s.properties) {
        const props = Object.fromEntries(
          Object.entries(s.properties as Record<string, Json>).map(([k, v]) => [k, valueFor(v, known, depth + 1)]),
        );
        good = fc.record(props, { requiredKeys: [] });
      } else
        good = fc.dictionary(
          fc.oneof(fc.string({ maxLength: 70 }), fc.constantFrom('a.b', '$set', 'a\u0000', 'ok_key')),
          fc.oneof(fc.string({ maxLength: 600 }), fc.constantFrom(...CONTROL_CHARACTERS, 'two\nlines'), anything),
          { maxKeys: 60 },
        );
      break;
    default:
      good = anything;
  }
  return fc.oneof({ weight: 5, arbitrary: good }, { weight: 1, arbitrary: anything });
}

/** Every byte of the text's UTF-8 percent-encoded (a lone surrogate as U+FFFD: encodeURIComponent would throw). */
const formEncoded = (v: string): string => Buffer.from(v, 'utf8').toString('hex').replace(/../g, '%$&');

/** A page's form body: its fields (and others) with real values, hostile ones, or the field more than once. */
function formFor(fields: string[], known: Known): fc.Arbitrary<Buffer> {
  const value = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...(known.formValues?.length ? known.formValues : ['x'])) },
    { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...CONTROL_CHARACTERS, ...LINE_BREAKS).map((c) => `a${c}b@example.com`),
    },
    { weight: 1, arbitrary: fc.integer({ min: 250, max: 20_000 }).map((n) => 'x'.repeat(n)) },
  );
  const pair = fc.tuple(
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...fields) },
      { weight: 1, arbitrary: fc.constantFrom('__proto__', 'email[]', '_csrf[x]', '', 'a'.repeat(300)) },
    ),
    value,
  );
  const encoded = fc
    .array(pair, { maxLength: 12 })
    .map((pairs) => Buffer.from(pairs.map(([k, v]) => `${formEncoded(k)}=${formEncoded(v)}`).join('&')));
  return fc.oneof(
    { weight: 5, arbitrary: encoded },
    {
      weight: 1,
      arbitrary: fc
        .tuple(encoded, fc.constantFrom(...BROKEN_ENCODINGS))
        .map(([b, bad]) => Buffer.concat([b, Buffer.from(`&email=${bad}&_csrf=${bad}`)])),
    },
  );
}

/** A body: the schema's object with hostile twists, or something that is not that object at all. */
function bodyFor(op: Operation, known: Known): fc.Arbitrary<Buffer | undefined> {
  if (op.form)
    return fc.oneof(
      { weight: 4, arbitrary: formFor(op.form, known) },
      { weight: 1, arbitrary: jsonBodyFor(op, known) },
    );
  return jsonBodyFor(op, known);
}

function jsonBodyFor(op: Operation, known: Known): fc.Arbitrary<Buffer | undefined> {
  const json = (v: unknown) => Buffer.from(JSON.stringify(v));
  const shaped = op.bodySchema ? valueFor(op.bodySchema, known) : fc.constant({});
  const extra = fc
    .tuple(
      shaped,
      fc.dictionary(
        fc.constantFrom('__proto__', 'constructor', 'prototype', '$where', '$gt', 'a.b', 'unknown'),
        fc.jsonValue({ maxDepth: 2 }),
        { maxKeys: 2 },
      ),
    )
    .map(([v, x]) => (typeof v === 'object' && v && !Array.isArray(v) ? { ...x, ...v } : v));
  return fc.oneof(
    { weight: 6, arbitrary: shaped.map(json) },
    { weight: 2, arbitrary: extra.map((v) => Buffer.from(JSON.stringify(v).replace('{"__proto__"', '{"__proto__"'))) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(json) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          '{',
          '{"a":',
          '[1,2',
          'nul',
          '{"name": "\\ud800"}',
          '\u0000',
          '',
          '{"a":1}{"b":2}',
          '"just a string"',
          '123',
          'true',
        )
        .map((s) => Buffer.from(s)),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 10, max: 12_000 }).map((n) => Buffer.from('['.repeat(n) + ']'.repeat(n))),
    },
    { weight: 1, arbitrary: fc.constant(Buffer.from(JSON.stringify({ name: 'x'.repeat(70 * 1024) }))) },
    { weight: 1, arbitrary: fc.constant(Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from('{"name":"bom"}')])) },
  );
}

/**
 * A file for an operation whose body is one (POST /api/v1/imports): rows of every format, good and
 * broken, and what is not a file of that kind at all: garbage bytes, bad UTF-8, lines longer than a
 * row may be, a header of another format, JSON lines sent as CSV and CSV as JSON lines.
 */
export function fileBodyFor(known: Known): fc.Arbitrary<Buffer> {
  const text = fc.oneof(
    { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 1, arbitrary: fc.constantFrom(...CONTROL_CHARACTERS, '\u2028', 'a,b', '"', '""', '\r\n') },
  );
  const row = fc.record(
    {
      type: fc.constantFrom('license', 'product', 'checkout_session', 'webhook_endpoint', 'subscription', 'x', ''),
      key: fc.oneof(
        fc.constantFrom(...known.licenseKeys),
        fc.constantFrom('fuzz-import-key-0001', 'fuzz-import-key-0002', '7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATX'),
        text,
      ),
      product_id: fc.oneof(fc.constantFrom(...known.ids), text),
      product_name: text,
      customer_email: fc.oneof(fc.constant('fuzz@example.com'), text),
      status: fc.oneof(fc.constantFrom('active', 'suspended', 'revoked', 'expired'), text),
      expires_at: fc.oneof(fc.constantFrom('2099-01-01', '2001-01-01T00:00:00Z', 'soon'), text),
      max_activations: fc.oneof(fc.integer({ min: -2, max: 200 }), fc.constant(null), text),
      activations: fc.oneof(fc.array(text, { maxLength: 3 }), fc.jsonValue({ maxDepth: 2 })),
      metadata: fc.oneof(fc.dictionary(text, text, { maxKeys: 3 }), fc.jsonValue({ maxDepth: 2 })),
      entitlements: fc.oneof(fc.array(text, { maxLength: 3 }), text),
      url: fc.oneof(fc.constantFrom('https://hooks.example.com/in', 'http://127.0.0.1:9/x', 'not a url'), text),
      events: fc.oneof(fc.constantFrom(['*'], ['license.created'], ['nope']), fc.jsonValue({ maxDepth: 1 })),
      name: text,
      price: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: [] },
  );
  const jsonl = fc
    .array(
      fc.oneof(
        { weight: 4, arbitrary: row.map((r) => JSON.stringify(r)) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)) },
        { weight: 1, arbitrary: text },
      ),
      { minLength: 1, maxLength: 12 },
    )
    .map((lines) => lines.join('\n'));
  const header = fc.constantFrom(
    'key,product_id,customer_email,status,expires_at,max_activations,activations,entitlements,metadata.plan',
    'Purchase ID,Item Name,Purchase Email,License Key,Refunded?',
    'id,key,name,status,expiry,maxMachines,policy,email,metadata,machines',
    'Key,Status,Product,Customer email,Activation limit,Expires at',
    'nothing,we,know',
    '"unclosed,header',
  );
  const csv = fc
    .tuple(
      header,
      fc.array(fc.array(fc.oneof(text, fc.constantFrom('"quoted, cell"', '"unclosed', 'a""b')), { maxLength: 10 }), {
        maxLength: 12,
      }),
      fc.constantFrom('\n', '\r\n', '\r'),
    )
    .map(([h, rows, eol]) => [h, ...rows.map((r) => r.join(','))].join(eol));
  // A header of thousands of columns (refused past 256), or of 256 with every cell of its rows holding
  // control characters: a row's cost must not grow with the columns, nor the store be handed what it cannot hold.
  const controls = fc.constantFrom(...CONTROL_CHARACTERS);
  const wideCsv = fc
    .tuple(fc.oneof(fc.integer({ min: 257, max: 40_000 }), fc.constant(256)), controls, fc.integer({ min: 1, max: 30 }))
    .map(([columns, c, rows]) => {
      const header = [
        'key',
        'product_name',
        'customer_email',
        ...Array.from({ length: columns - 3 }, (_, i) => `x${i}`),
      ];
      const row = (r: number) =>
        [`wide-key-${r}${c}`, `Wide ${c}product`, `w${r}${c}@example.com`, `"cell${c}, ""quoted"""`, c].join(',');
      return Buffer.from([header.join(','), ...Array.from({ length: rows }, (_, r) => row(r))].join('\n'));
    });
  return fc.oneof(
    { weight: 2, arbitrary: wideCsv },
    { weight: 4, arbitrary: jsonl.map((t) => Buffer.from(t)) },
    { weight: 4, arbitrary: csv.map((t) => Buffer.from(t)) },
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 600 }).map((a) => Buffer.from(a)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        // Bad UTF-8: a truncated sequence, an overlong one, a lone continuation byte, a surrogate's bytes.
        Buffer.concat([
          Buffer.from('{"key":"bad-utf8-'),
          Buffer.from([0xc3, 0x28, 0xe0, 0x80, 0x80, 0xed, 0xa0, 0x80]),
          Buffer.from('"}\n'),
        ]),
        Buffer.concat([
          Buffer.from('key,product_id,customer_email\n'),
          Buffer.from([0x80, 0xff, 0xfe]),
          Buffer.from(',x,y\n'),
        ]),
        Buffer.from([
          0xef,
          0xbb,
          0xbf,
          ...Buffer.from('{"key":"bom-key-0001","product_name":"B","customer_email":"b@example.com"}'),
        ]),
        Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0x22, 0x00]), // UTF-16
        Buffer.from('\u0000\u0000\u0000'),
        Buffer.from('\n\n\n'),
        Buffer.from('{"key": "\\ud800"}\n'),
      ),
    },
    {
      // Lines longer than a row may be (256 KiB): one in the first piece, or after a good first line.
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 1, max: 400 }), fc.constantFrom('jsonl', 'csv', 'late'))
        .map(([kib, kind]) => {
          const long = 'x'.repeat(kib * 1024);
          if (kind === 'jsonl') return Buffer.from(`{"key":"${long}"}\n`);
          if (kind === 'csv') return Buffer.from(`key,product_id,customer_email\n${long},p,e\n`);
          return Buffer.from(`{"key":"fuzz-late-0001","product_name":"L","customer_email":"l@example.com"}\n${long}\n`);
        }),
    },
  );
}

/** The Content-Types a file goes with: its own (mostly), with parameters, and the wrong ones. */
const fileContentType = (types: string[]) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...types) },
    { weight: 2, arbitrary: fc.constantFrom(...types.map((t) => `${t}; charset=utf-8`), 'text/csv; charset=latin1') },
    { weight: 1, arbitrary: fc.constantFrom('application/json', 'text/plain', 'application/csv', '') },
  );

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json; charset=nope',
  'application/json; charset="',
  'application/problem+json',
  'application/merge-patch+json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'multipart/form-data',
  ';;;',
  'application/',
  '*/*',
  '',
];

/**
 * Auth: a real credential most of the time (else nothing gets past auth): an API key, or a licence key
 * as its own "License" credential (the OpenAPI document's `license` scheme; of either account, in any
 * spelling); else forged, malformed or missing.
 */
function authorization(known: Known): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...known.apiKeys).map((k) => `Bearer ${k}`) },
    {
      weight: 4,
      arbitrary: fc
        .tuple(fc.constantFrom(...known.licenseKeys), fc.boolean())
        .map(([k, lower]) => `License ${lower ? k.toLowerCase() : k}`),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'License',
        'License ',
        'License not-a-key',
        'license 7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG',
        'License 7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATX',
        `License ${'A'.repeat(300)}`,
        'License  two  spaces',
        'License %ED%A0%80',
      ),
    },
    { weight: 1, arbitrary: asciiString(60).map((s) => `License ${s}`) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'Bearer',
        'Bearer ',
        'Basic YTpi',
        'bearer lk_full_x',
        'Bearer lk_full_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        `Bearer ${'a'.repeat(300)}`,
        'Bearer  two  spaces',
        'Bearer %ED%A0%80',
      ),
    },
    { weight: 1, arbitrary: asciiString(60).map((s) => `Bearer ${s}`) },
  );
}

/** Cookies: none, real-looking, or broken percent-encoding in the ones the gateway and page read. */
const cookies = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom('lk_session', 'lk_csrf', 'lk_checkout_csrf', 'lk_portal', 'lk_portal_csrf', 'other'),
        fc.oneof(
          fc.constantFrom(...BROKEN_ENCODINGS),
          asciiString(40).map((s) => s.replace(/;/g, '')),
        ),
      )
      .map(([k, v]) => `${k}=${v}`),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '=',
      ';;;',
      'lk_session',
      'lk_session=',
      'a=b; lk_session=%E0%A4%A; c',
      `lk_session=${'x'.repeat(5000)}`,
      `lk_portal=${'x'.repeat(43)}`,
      'lk_portal=%ED%A0%80; lk_portal_csrf=%',
    ),
  },
);

/** The cookies above, and the known real ones (a signed-in portal) often enough to reach what is behind sign-in. */
const cookiesFor = (known: Known): fc.Arbitrary<string | undefined> =>
  known.cookies?.length
    ? fc.oneof({ weight: 2, arbitrary: cookies }, { weight: 3, arbitrary: fc.constantFrom(...known.cookies) })
    : cookies;

const methods = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS', 'HEAD'];

/** One hostile request to one operation. */
export function requestFor(op: Operation, known: Known): fc.Arbitrary<FuzzRequest> {
  const pathParams = op.params.filter((p) => p.in === 'path');
  const queryParams = op.params.filter((p) => p.in === 'query');
  const value = hostileValue(known);
  const queryValue = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('1', '20', '100', '0', '101', 'active', 'open', '-1', 'x') },
    { weight: 4, arbitrary: value },
  );
  // A parameter with a list of values (format=jsonl|csv|…) mostly takes one of them, so requests get past it.
  const listed = queryParams.filter((p) => Array.isArray(p.schema?.enum));
  const listedPair = listed.length
    ? fc
        .constantFrom(...listed)
        .chain((p) =>
          fc.constantFrom(...(p.schema.enum as string[])).map((v) => [p.name as string, v] as [string, string]),
        )
    : undefined;
  const query = fc.array(
    fc.tuple(
      fc.oneof(
        {
          weight: 5,
          arbitrary: fc.constantFrom(...(queryParams.length ? queryParams.map((p) => p.name as string) : ['limit'])),
        },
        {
          weight: 1,
          arbitrary: fc.oneof(
            fc.constantFrom('%ED%A0%80', 'x', '__proto__', 'limit[]', '', 'foo', '%00', 'limit%00'),
            pctEncoded(10),
          ),
        },
      ),
      queryValue,
    ),
    { maxLength: 4 },
  );
  // An operation without query parameters refuses any (400): mostly send none, so requests get to its handler.
  const file = (op.fileTypes?.length ?? 0) > 0;
  const queryFor = listedPair
    ? fc.oneof(
        { weight: file ? 4 : 1, arbitrary: listedPair.map((pair) => [pair]) },
        { weight: file ? 1 : 3, arbitrary: query },
      )
    : queryParams.length
      ? query
      : fc.oneof({ weight: 4, arbitrary: fc.constant([] as [string, string][]) }, { weight: 1, arbitrary: query });
  return fc
    .record({
      // A parameter that names its real values (a page behind sign-in: its account and licence) mostly takes one.
      params: fc.tuple(
        ...pathParams.map((p) =>
          Array.isArray(p.real) && p.real.length
            ? fc.oneof(
                { weight: 3, arbitrary: fc.constantFrom(...(p.real as string[])).map(encodeURIComponent) },
                { weight: 2, arbitrary: value },
              )
            : value,
        ),
      ),
      query: queryFor,
      method: fc.oneof(
        { weight: 12, arbitrary: fc.constant(op.method) },
        { weight: 1, arbitrary: fc.constantFrom(...methods) },
      ),
      alias: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      trailing: fc.oneof(
        { weight: 8, arbitrary: fc.constant('') },
        { weight: 1, arbitrary: fc.constantFrom('/', '//', '/%ED%A0%80', '/x') },
      ),
      body: file
        ? fc.oneof({ weight: 6, arbitrary: fileBodyFor(known) }, { weight: 1, arbitrary: bodyFor(op, known) })
        : bodyFor(op, known),
      contentType: file
        ? fileContentType(op.fileTypes!)
        : fc.oneof(
            { weight: 8, arbitrary: fc.constant(op.form ? 'application/x-www-form-urlencoded' : 'application/json') },
            { weight: 3, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
          ),
      contentEncoding: fc.oneof(
        { weight: 10, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-nope', 'gzip, gzip') },
      ),
      authorization: authorization(known),
      cookie: cookiesFor(known),
      requestId: fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: asciiString(300) }),
      idempotencyKey: fc.oneof(
        { weight: 5, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: asciiString(300) },
      ),
      forwarded: fc.oneof(
        { weight: 6, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom('not-an-ip', '::1', '1.2.3.4, %ED', '') },
      ),
      accept: fc.oneof(
        { weight: 6, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom('text/html', 'application/xml', '*/*;q=x', '') },
      ),
    })
    .map((r) => {
      let i = 0;
      let path = op.template.replace(/\{[^}]+\}/g, () => r.params[i++] || 'x') + r.trailing;
      if (r.alias && path.startsWith('/api/v1')) path = path.slice(4);
      if (r.query.length) path += `?${r.query.map(([k, v]) => `${k}=${v}`).join('&')}`;
      const headers: Record<string, string> = {};
      const hasBody = r.body !== undefined && !['GET', 'HEAD', 'DELETE', 'OPTIONS'].includes(r.method);
      if (hasBody && r.contentType) headers['content-type'] = r.contentType;
      if (hasBody && r.contentEncoding) headers['content-encoding'] = r.contentEncoding;
      if (r.authorization !== undefined) headers.authorization = r.authorization;
      if (r.cookie !== undefined) headers.cookie = r.cookie;
      if (r.requestId !== undefined) headers['x-request-id'] = r.requestId;
      if (r.idempotencyKey !== undefined) headers['idempotency-key'] = r.idempotencyKey;
      if (r.forwarded !== undefined) headers['x-forwarded-for'] = r.forwarded;
      if (r.accept !== undefined) headers.accept = r.accept;
      return { op: `${op.method} ${op.template}`, method: r.method, path, headers, body: hasBody ? r.body : undefined };
    });
}

/** Sends exactly these bytes (no client-side normalisation of the path). */
export function send(base: string, req: FuzzRequest): Promise<FuzzResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const r = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        headers: { ...req.headers, ...(req.body ? { 'content-length': String(req.body.length) } : {}) },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end(req.body);
  });
}

/** How a failing request is shown: enough to replay it with curl. */
export function describe(req: FuzzRequest, res?: FuzzResponse): string {
  const body = req.body ? req.body.toString('utf8').slice(0, 300) : '';
  return [
    `${req.method} ${req.path.slice(0, 400)}${req.path.length > 400 ? '…' : ''}  (operation ${req.op})`,
    ...Object.entries(req.headers).map(
      ([k, v]) => `${k}: ${k === 'authorization' ? `${v.slice(0, 20)}…` : v.slice(0, 200)}`,
    ),
    body && `body (${req.body!.length} bytes): ${body}`,
    res && `→ ${res.status} ${res.contentType}\n${res.text.slice(0, 400)}`,
  ]
    .filter(Boolean)
    .join('\n');
}
