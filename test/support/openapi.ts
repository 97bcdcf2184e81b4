import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { openApiDocument } from '../../gateway/src/openapi/document';

// Every response an end-to-end test receives through client() is checked
// against the OpenAPI document the gateway serves: the path and method must
// be documented (or the answer must be the documented 404/405 problem), the
// status must be listed (or be an error covered by `default`), and the body
// must match the schema. A drift between code and document fails the test
// that met it, naming the operation and the mismatch.

type Json = Record<string, any>;
const doc = openApiDocument('test') as unknown as Json;

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(
  JSON.parse(
    JSON.stringify({ $id: 'api', components: doc.components }).replaceAll('"#/components/', '"api#/components/'),
  ),
);
const compiled = new Map<string, ValidateFunction>();
function validator(key: string, schema: Json): ValidateFunction {
  let v = compiled.get(key);
  if (!v) {
    v = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"api#/components/')));
    compiled.set(key, v);
  }
  return v;
}

// Templates with fewer parameters first, so /licenses/validate wins over /licenses/{key}.
const templates = Object.keys(doc.paths)
  .map((t) => ({
    template: t,
    params: (t.match(/\{/g) ?? []).length,
    re: new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }))
  .sort((a, b) => a.params - b.params);

export function matchPath(path: string): string | undefined {
  const bare = path.split('?')[0].replace(/^\/v1(\/|$)/, '/api/v1$1');
  return templates.find((t) => t.re.test(bare))?.template;
}

export const exercised = new Set<string>();

/**
 * What the server accepted must be what the document allows: for a 2xx, the
 * JSON body sent must match the operation's request schema and every query
 * parameter must be documented (else the document under-describes the API).
 */
export function checkAcceptedRequest(method: string, path: string, status: number, body: unknown): void {
  if (status < 200 || status >= 300) return;
  const template = matchPath(path);
  const op = template ? (doc.paths[template][method.toLowerCase()] as Json | undefined) : undefined;
  if (!op) return; // checkResponse reports it
  const where = `${method} ${path} → ${status}`;
  const documented = new Set(
    ((op.parameters ?? []) as Json[]).filter((p) => p.in === 'query').map((p) => p.name as string),
  );
  for (const name of new URLSearchParams(path.split('?')[1] ?? '').keys()) {
    if (!documented.has(name))
      throw new Error(`${where}: query parameter "${name}" was accepted but ${op.operationId} does not document it`);
  }
  if (body === undefined) return;
  // A body that is not JSON (an import's file): its media types are documented, not its fields.
  if (op.requestBody?.content && !op.requestBody.content['application/json']) return;
  const schema = op.requestBody?.content?.['application/json']?.schema;
  if (!schema) {
    if (typeof body === 'object' && body !== null && Object.keys(body).length)
      throw new Error(`${where}: a body was accepted but ${op.operationId} documents none`);
    return;
  }
  const v = validator(`${op.operationId}:request`, schema);
  if (!v(body))
    throw new Error(
      `${where}: the server accepted a body its document refuses (${op.operationId}): ${ajv.errorsText(v.errors)}\n${JSON.stringify(body).slice(0, 300)}`,
    );
}

export function checkResponse(method: string, path: string, status: number, contentType: string, body: unknown): void {
  const where = `${method} ${path} → ${status}`;
  const template = matchPath(path);
  const problemCheck = () => {
    if (!contentType.startsWith('application/problem+json'))
      throw new Error(`${where}: an error must be application/problem+json, got "${contentType}"`);
    const v = validator('Problem', { $ref: '#/components/schemas/Problem' });
    if (!v(body))
      throw new Error(`${where}: problem body does not match the OpenAPI Problem schema: ${ajv.errorsText(v.errors)}`);
  };
  if (!template) {
    if (status === 404) {
      problemCheck();
      return;
    }
    throw new Error(`${where}: the path is not in the OpenAPI document (gateway/src/openapi/document.ts)`);
  }
  const op = doc.paths[template][method.toLowerCase()] as Json | undefined;
  if (!op) {
    if (status === 405 || status === 404) {
      problemCheck();
      return;
    }
    throw new Error(`${where}: ${method} ${template} is not in the OpenAPI document`);
  }
  exercised.add(`${method.toUpperCase()} ${template}`);
  const response = op.responses[String(status)] ?? (status >= 400 ? op.responses.default : undefined);
  if (!response) throw new Error(`${where}: status ${status} is not documented for ${op.operationId}`);
  if (!response.content) {
    if (body !== '' && body !== undefined)
      throw new Error(`${where}: ${op.operationId} documents no body for ${status}, got one`);
    return;
  }
  const mediaType = Object.keys(response.content).find((t) => contentType.startsWith(t));
  if (!mediaType)
    throw new Error(
      `${where}: content type "${contentType}" is not documented (${Object.keys(response.content).join(', ')})`,
    );
  if (!mediaType.includes('json')) return;
  const v = validator(
    `${op.operationId}:${status in op.responses ? status : 'default'}:${mediaType}`,
    response.content[mediaType].schema,
  );
  if (!v(body))
    throw new Error(
      `${where}: body does not match ${op.operationId}'s ${status} schema: ${ajv.errorsText(v.errors)}\n${JSON.stringify(body).slice(0, 500)}`,
    );
}
