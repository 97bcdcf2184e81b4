import { type ErrorCode, type Html, html, joinHtml, nothing } from '@licensing/runtime';
import { httpStatus } from '../http/errors';
import type { OpenApiDocument } from './document';

// /docs: the OpenAPI document as one plain, readable HTML page (no scripts, no
// third-party assets), generated from the same object /openapi.json serves. Written with html`…` of
// @licensing/runtime: every text of the document is escaped, and markup comes only from this file.

// biome-ignore lint/suspicious/noExplicitAny: walks an arbitrary JSON Schema document
type Json = Record<string, any>;

/** Prose with `code spans` shown as code (descriptions use Markdown's backticks); the rest is text. */
const prose = (v: string | undefined): Html =>
  html`${(v ?? '').split(/`([^`]+)`/).map((part, i) => (i % 2 ? html`<code>${part}</code>` : html`${part}`))}`;

// Typed by ErrorCode, so a new code cannot be left out of the reference.
const ERROR_TEXT: Record<ErrorCode, string> = {
  invalid_request:
    'Bad JSON, a missing, empty, wrong-typed or too long field, an unknown field or query parameter, a malformed id.',
  unauthorized: 'No API key, or a mangled, unknown or revoked one.',
  forbidden: 'A validate-scope key outside validation and status.',
  not_found: "Unknown path or id, or another account's resource.",
  method_not_allowed: 'A known path with another method; Allow lists the right ones.',
  conflict: 'A transition that is not allowed, or an idempotent request still in flight.',
  gone: 'A download link used after it expired (5 minutes): ask for a new one.',
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

function fields(doc: OpenApiDocument, schema: Json): Html {
  const s = resolve(doc, schema);
  if (!s?.properties) return nothing;
  const required = new Set<string>(s.required ?? []);
  const rows = Object.entries(s.properties as Record<string, Json>).map(
    ([name, p]) =>
      html`<tr><td><code>${name}</code>${required.has(name) ? nothing : html` <small>optional</small>`}</td><td>${typeOf(doc, p)}</td><td>${resolve(doc, p)?.description ?? p.description ?? ''}</td></tr>`,
  );
  return html`<table><tr><th>field</th><th>type</th><th></th></tr>${rows}</table>`;
}

/** Who may call an operation, after its summary. */
function access(op: Json): Html {
  if (op.security?.length === 0) return html` <small>(no API key)</small>`;
  return op['x-key-scopes']?.includes('validate') ? html` <small>(full or validate key)</small>` : nothing;
}

function operation(doc: OpenApiDocument, path: string, method: string, op: Json): Html {
  const params = (op.parameters ?? []) as Json[];
  const body = op.requestBody?.content?.['application/json']?.schema;
  const responses = Object.entries(op.responses as Record<string, Json>)
    .filter(([status]) => status !== 'default')
    .map(([status, r]) => {
      const schema = r.content?.['application/json']?.schema;
      return html`<p><b>${status}</b> ${r.description}${schema ? html` — <code>${typeOf(doc, schema)}</code>` : nothing}</p>${schema ? fields(doc, schema) : nothing}`;
    });
  const paramRows = params.map(
    (p) =>
      html`<tr><td><code>${p.name}</code>${p.required ? nothing : html` <small>optional</small>`}</td><td>${p.in}</td><td>${p.description}</td></tr>`,
  );
  return html`<section class="op" id="${op.operationId}">
<h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${path}</code></h3>
<p>${op.summary}${access(op)}</p>
${op.description ? html`<p>${prose(op.description)}</p>` : nothing}
${params.length ? html`<table><tr><th>parameter</th><th>in</th><th></th></tr>${paramRows}</table>` : nothing}
${body ? html`<p><b>Body</b> <code>${typeOf(doc, body)}</code></p>${fields(doc, body)}` : nothing}
${joinHtml(responses, '\n')}
</section>`;
}

function section(doc: OpenApiDocument, name: string): Html {
  const ops: Html[] = [];
  for (const [path, methods] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(methods as Record<string, Json>))
      if (op.tags?.includes(name)) ops.push(operation(doc, path, method, op));
  return html`<h2 id="${name.toLowerCase()}">${name}</h2>\n${joinHtml(ops, '\n')}`;
}

export function referencePage(doc: OpenApiDocument): string {
  const sections = doc.tags.map(({ name }) => section(doc, name));
  const errors = (Object.entries(ERROR_TEXT) as [ErrorCode, string][])
    .sort((a, b) => httpStatus[a[0]] - httpStatus[b[0]])
    .map(
      ([code, text]) =>
        html`<tr id="error-${code}"><td><code>${code}</code></td><td>${httpStatus[code]}</td><td>${text}</td></tr>`,
    );
  const nav = doc.tags.map(({ name }) => html`<a href="#${name.toLowerCase()}">${name}</a>`);
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${doc.info.title} ${doc.info.version} — reference</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d232b}
code{font:13px ui-monospace,monospace;background:#f2f4f7;padding:0 .25rem;border-radius:3px}
table{border-collapse:collapse;margin:.5rem 0 1rem;width:100%}td,th{border-bottom:1px solid #e3e7ec;padding:.25rem .5rem;text-align:left;vertical-align:top}
.op{border-top:1px solid #d5dbe3;padding-top:.5rem}.m{font:600 12px ui-monospace,monospace;padding:.1rem .4rem;border-radius:3px;color:#fff;background:#52606d}
.get{background:#1f7a4d}.post{background:#2360a5}.patch{background:#8a5a00}.delete{background:#a62c2c}small{color:#5c6773}
</style></head><body>
<h1>${doc.info.title} <small>${doc.info.version}</small></h1>
<p>${prose(doc.info.description)}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${doc.openapi}).</p>
<nav>${joinHtml(nav, ' · ')} · <a href="#errors">Errors</a></nav>
${joinHtml(sections, '\n')}
<h2 id="errors">Errors</h2>
<p>Every error is <code>application/problem+json</code>: <code>type</code>, <code>title</code>, <code>status</code>, <code>detail</code>, <code>code</code>, <code>request_id</code>, and <code>errors</code> (one per invalid field) on 400s.</p>
<table><tr><th>code</th><th>status</th><th>when</th></tr>${errors}</table>
</body></html>`.toString();
}
