// The components, settings and metrics sections of docs/operations.md,
// generated from components.json, the config schemas and the metric catalogue
// so the page cannot fall behind the code. `npm run docs` rewrites them; a unit
// test fails when they differ.
import { commonSchema, METRIC_HELP, type Schema, type Setting } from '@licensing/runtime';
import {
  components,
  gateway,
  httpPortVariable,
  portVariable,
  services,
  web,
  type Component,
  type ComponentEntry,
  type ComponentPorts,
} from './components';

/** The config schema of every component by name (passed in: the script loads the built ones, tests the sources). */
export type Schemas = Record<Component, Schema>;

const cell = (s: string) => s.replace(/\|/g, '\\|');

// A secret's value never appears here: a default that held credentials (a URL with user:password@) is not shown.
function defaultOf(name: string, s: Setting<unknown>): string {
  const secret = s.secret ? `, secret (or \`${name}_FILE\`)` : '';
  if (s.default === undefined) return `**required**${secret}`;
  if (s.default === '') return `(empty)${secret}`;
  if (s.secret && /:\/\/[^/@]*@/.test(String(s.default))) return `(not shown)${secret}`;
  return `\`${String(s.default)}\`${secret}`;
}

function meaning(s: Setting<unknown>): string {
  const extra = [
    s.values ? `one of ${s.values.map((v) => `\`${v}\``).join(', ')}` : '',
    s.min !== undefined || s.max !== undefined ? `range ${s.min ?? '…'}–${s.max ?? '…'}` : '',
  ].filter(Boolean);
  return cell(`${s.description}${extra.length ? ` (${extra.join('; ')})` : ''}`);
}

function table(rows: [string, string, string][]): string {
  return [
    '| variable | default | meaning |',
    '|---|---|---|',
    ...rows.map(([a, b, c]) => `| \`${a}\` | ${b} | ${c} |`),
  ].join('\n');
}

const rowsOf = (schema: Schema, names: string[]): [string, string, string][] =>
  names.map((n) => [n, defaultOf(n, schema[n]), meaning(schema[n])]);

function schemaOf(schemas: Schemas, name: Component): Schema {
  if (!schemas[name]) throw new Error(`no config schema for ${name}`);
  return schemas[name];
}

export function renderSettings(schemas: Schemas): string {
  const gatewaySchema = schemaOf(schemas, gateway.name);
  const serviceSchemas = Object.fromEntries(services.map((c) => [c.name, schemaOf(schemas, c.name)]));
  const firstSchema = serviceSchemas[services[0].name];
  const common = Object.keys(commonSchema);
  const perService = Object.keys(firstSchema).filter(
    (k) => !common.includes(k) && Object.values(serviceSchemas).every((s) => k in s),
  );
  const out: string[] = [];
  out.push(
    'Every secret setting can instead be given as a file: `NAME_FILE=/run/secrets/name` (Docker and Kubernetes secrets).',
    '',
  );
  out.push(
    '### Every component',
    '',
    table(rowsOf(commonSchema, common).map(([n, d, m]) => [n, d, n === 'MONGO_URL' ? `${m} (services only)` : m])),
    '',
  );
  out.push(
    '### Every service',
    '',
    table(
      perService.map((n) => {
        const defaults = Object.entries(serviceSchemas).map(([svc, s]) => `${svc} \`${String(s[n].default)}\``);
        const same = new Set(Object.values(serviceSchemas).map((s) => String(s[n].default))).size === 1;
        return [n, same ? defaultOf(n, firstSchema[n]) : defaults.join(', '), meaning(firstSchema[n])];
      }),
    ),
    '',
  );
  for (const [name, schema] of Object.entries(serviceSchemas)) {
    const own = Object.keys(schema).filter((k) => !common.includes(k) && !perService.includes(k));
    // The title components.json gives it ("Licence service": prose, where the name is code's `license`).
    const title = services.find((s) => s.name === name)?.title ?? `${name} service`;
    out.push(`### ${title}`, '', table(rowsOf(schema, own)), '');
  }
  if (web) {
    const webSchema = schemaOf(schemas, web.name);
    out.push(
      `### ${web.title}`,
      '',
      table(
        rowsOf(
          webSchema,
          Object.keys(webSchema).filter((k) => !common.includes(k)),
        ),
      ),
      '',
    );
  }
  const gatewayOwn = Object.keys(gatewaySchema).filter((k) => !common.includes(k));
  out.push('### Gateway', '', table(rowsOf(gatewaySchema, gatewayOwn)), '');
  return out.join('\n');
}

const portList = (c: ComponentEntry, ports: ComponentPorts, variables: boolean): string => {
  const named = (port: number, variable: string) => (variables ? `${port} (\`${variable}\`)` : String(port));
  return [
    ports.grpc !== undefined ? `gRPC ${named(ports.grpc, portVariable(c))}` : '',
    ports.http !== undefined
      ? c.kind === 'gateway'
        ? `HTTP ${named(ports.http, portVariable(c))}${ports.https !== undefined ? ' (Kubernetes)' : ''}`
        : c.kind === 'web'
          ? `HTTP ${named(ports.http, portVariable(c))}`
          : `web server ${named(ports.http, httpPortVariable(c))}`
      : '',
    ports.https !== undefined ? `HTTPS ${ports.https} (compose)` : '',
    `metrics ${ports.metrics}`,
  ]
    .filter(Boolean)
    .join(', ');
};

/** Every component with its folder, ports and gRPC callers, from components.json. */
export function renderComponents(): string {
  const rows = components.map((c) =>
    [
      c.title,
      `\`${c.folder}\``,
      portList(c, c.ports, true),
      portList(c, c.deployPorts, false),
      c.kind === 'gateway'
        ? '(the public API)'
        : c.kind === 'web'
          ? '(the pages, through the gateway)'
          : c.callers.join(', '),
    ].join(' | '),
  );
  return `${[
    '| component | folder | `npm start` ports (variable) | compose and Kubernetes ports | called over gRPC by |',
    '|---|---|---|---|---|',
    ...rows.map((r) => `| ${r} |`),
  ].join('\n')}\n`;
}

export function renderMetrics(): string {
  return `${['| metric | what it counts |', '|---|---|', ...Object.entries(METRIC_HELP).map(([name, help]) => `| \`${name}\` | ${cell(help)} |`)].join('\n')}\n`;
}

/** Replaces each `<!-- generated:NAME -->…<!-- end:NAME -->` block of `text`. */
export function withGeneratedSections(text: string, schemas: Schemas): string {
  const sections = { components: renderComponents, settings: () => renderSettings(schemas), metrics: renderMetrics };
  let out = text;
  for (const [name, render] of Object.entries(sections)) {
    const re = new RegExp(`(<!-- generated:${name} [^>]*-->\\n)[\\s\\S]*?(<!-- end:${name} -->)`);
    if (!re.test(out)) throw new Error(`docs/operations.md has no <!-- generated:${name} --> block`);
    out = out.replace(re, (_m, start: string, end: string) => `${start}${render()}${end}`);
  }
  return out;
}
