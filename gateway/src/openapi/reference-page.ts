import type { ErrorCode } from '@licensing/runtime';
import { httpStatus } from '../http/errors';
import type { OpenApiDocument } from './document';

// /docs: the OpenAPI document as one plain, readable HTML page (no scripts, no
// third-party assets), generated from the same object /openapi.json serves.

// biome-ignore lint/suspicious/noExplicitAny: walks an arbitrary JSON Schema document
type Json = Record<string, any>;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const h = (v: unknown): string => String(v ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]);
/** Escaped prose with `code spans` shown as code (descriptions use Markdown's backticks). */
const prose = (v: unknown): string => h(v).replace(/`([^`]+)`/g, '<code>$1</code>');

// Typed by ErrorCode, so a new code cannot be left out of the reference.
const ERROR_TEXT: Record<ErrorCode, string> = {
  invalid_request:
    'Bad JSON, a missing, empty, wrong-typed or too long field, an unknown field or query parameter, a malformed id.',
  unauthorized: 'No API key, or a mangled, unknown or revoked one.',
  forbidden: 'A validate-scope key outside validation and status.',
  not_found: "Unknown path or id, or another account's resource.",
  method_not_allowed: 'A known path with another method; Allow lists the right ones.',
  conflict: 'A transition that is not allowed, or an idempotent request still in flight.',
  payload_too_large: 'The body is larger than the limit (64 KiB by default).',
  unsupported_media_type: 'A body that is not application/json.',
  idempotency_key_reused: 'An Idempotency-Key reused with a different body.',
  https_required: 'Plain HTTP to a production gateway: use https://, and treat the key as exposed.',
  rate_limited: 'A rate limit ran out; Retry-After says when to retry.',
  internal: 'A bug on our side; never with a stack trace. Quote request_id.',
  service_unavailable: 'A backing service is down for a moment; Retry-After: 5.',
};

function resolve(doc: OpenApiDocument, schema: Json): Json {
  if (schema?.$ref) return (doc.components.schemas as Json)[String(schema.$ref).split('/').pop()!];
  return schema;
}

function typeOf(doc: OpenApiDocument, schema: Json): string {
  if (!schema) return '';
  if (schema.$ref) return String(schema.$ref).split('/').pop()!;
  if (schema.anyOf) return schema.anyOf.map((s: Json) => typeOf(doc, s)).join(' | ');
  if (schema.enum) return schema.enum.map((v: unknown) => JSON.stringify(v)).join(' | ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.type === 'array') return `${typeOf(doc, schema.items)}[]`;
  if (schema.type === 'object' && schema.additionalProperties && typeof schema.additionalProperties === 'object')
    return `map of ${typeOf(doc, schema.additionalProperties)}`;
  return [schema.type, schema.format].filter(Boolean).join(' ');
}

function fields(doc: OpenApiDocument, schema: Json): string {
  const s = resolve(doc, schema);
  if (!s?.properties) return '';
  const required = new Set<string>(s.required ?? []);
  const rows = Object.entries(s.properties as Record<string, Json>).map(
    ([name, p]) =>
      `<tr><td><code>${h(name)}</code>${required.has(name) ? '' : ' <small>optional</small>'}</td><td>${h(typeOf(doc, p))}</td><td>${h(resolve(doc, p)?.description ?? p.description ?? '')}</td></tr>`,
  );
  return `<table><tr><th>field</th><th>type</th><th></th></tr>${rows.join('')}</table>`;
}

export function referencePage(doc: OpenApiDocument): string {
  const sections = doc.tags.map(({ name }) => {
    const ops: string[] = [];
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods as Record<string, Json>)) {
        if (!op.tags?.includes(name)) continue;
        const params = (op.parameters ?? []) as Json[];
        const body = op.requestBody?.content?.['application/json']?.schema;
        const responses = Object.entries(op.responses as Record<string, Json>)
          .filter(([status]) => status !== 'default')
          .map(([status, r]) => {
            const schema = r.content?.['application/json']?.schema;
            return `<p><b>${h(status)}</b> ${h(r.description)}${schema ? ` — <code>${h(typeOf(doc, schema))}</code>` : ''}</p>${schema ? fields(doc, schema) : ''}`;
          });
        ops.push(`<section class="op" id="${h(op.operationId)}">
<h3><span class="m ${h(method)}">${h(method.toUpperCase())}</span> <code>${h(path)}</code></h3>
<p>${h(op.summary)}${op.security?.length === 0 ? ' <small>(no API key)</small>' : op['x-key-scopes']?.includes('validate') ? ' <small>(full or validate key)</small>' : ''}</p>
${op.description ? `<p>${prose(op.description)}</p>` : ''}
${params.length ? `<table><tr><th>parameter</th><th>in</th><th></th></tr>${params.map((p) => `<tr><td><code>${h(p.name)}</code>${p.required ? '' : ' <small>optional</small>'}</td><td>${h(p.in)}</td><td>${h(p.description)}</td></tr>`).join('')}</table>` : ''}
${body ? `<p><b>Body</b> <code>${h(typeOf(doc, body))}</code></p>${fields(doc, body)}` : ''}
${responses.join('\n')}
</section>`);
      }
    }
    return `<h2 id="${h(name.toLowerCase())}">${h(name)}</h2>\n${ops.join('\n')}`;
  });
  const errors = (Object.entries(ERROR_TEXT) as [ErrorCode, string][])
    .sort((a, b) => httpStatus[a[0]] - httpStatus[b[0]])
    .map(
      ([code, text]) =>
        `<tr id="error-${code}"><td><code>${code}</code></td><td>${httpStatus[code]}</td><td>${h(text)}</td></tr>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${h(doc.info.title)} ${h(doc.info.version)} — reference</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d232b}
code{font:13px ui-monospace,monospace;background:#f2f4f7;padding:0 .25rem;border-radius:3px}
table{border-collapse:collapse;margin:.5rem 0 1rem;width:100%}td,th{border-bottom:1px solid #e3e7ec;padding:.25rem .5rem;text-align:left;vertical-align:top}
.op{border-top:1px solid #d5dbe3;padding-top:.5rem}.m{font:600 12px ui-monospace,monospace;padding:.1rem .4rem;border-radius:3px;color:#fff;background:#52606d}
.get{background:#1f7a4d}.post{background:#2360a5}.patch{background:#8a5a00}.delete{background:#a62c2c}small{color:#5c6773}
</style></head><body>
<h1>${h(doc.info.title)} <small>${h(doc.info.version)}</small></h1>
<p>${prose(doc.info.description)}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${h(doc.openapi)}).</p>
<nav>${doc.tags.map(({ name }) => `<a href="#${h(name.toLowerCase())}">${h(name)}</a>`).join(' · ')} · <a href="#errors">Errors</a></nav>
${sections.join('\n')}
<h2 id="errors">Errors</h2>
<p>Every error is <code>application/problem+json</code>: <code>type</code>, <code>title</code>, <code>status</code>, <code>detail</code>, <code>code</code>, <code>request_id</code>, and <code>errors</code> (one per invalid field) on 400s.</p>
<table><tr><th>code</th><th>status</th><th>when</th></tr>${errors}</table>
</body></html>`;
}
