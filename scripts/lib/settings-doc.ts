// The settings and metrics sections of docs/operations.md, generated from the
// config schemas and the metric catalogue so the page cannot fall behind the
// code. `npm run docs` rewrites them; a unit test fails when they differ.
import { commonSchema, METRIC_HELP, type Schema, type Setting } from '@licensing/runtime';

/** The config schema of every component (passed in: the script loads the built ones, tests the sources). */
export interface Schemas {
  account: Schema;
  product: Schema;
  license: Schema;
  checkout: Schema;
  webhook: Schema;
  gateway: Schema;
}

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

export function renderSettings(schemas: Schemas): string {
  const { gateway: gatewaySchema, ...services } = schemas;
  const accountSchema = services.account;
  const common = Object.keys(commonSchema);
  const perService = Object.keys(accountSchema).filter(
    (k) => !common.includes(k) && Object.values(services).every((s) => k in s),
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
        const defaults = Object.entries(services).map(([svc, s]) => `${svc} \`${String(s[n].default)}\``);
        const same = new Set(Object.values(services).map((s) => String(s[n].default))).size === 1;
        return [n, same ? defaultOf(n, accountSchema[n]) : defaults.join(', '), meaning(accountSchema[n])];
      }),
    ),
    '',
  );
  for (const [name, schema] of Object.entries(services)) {
    const own = Object.keys(schema).filter((k) => !common.includes(k) && !perService.includes(k));
    out.push(`### ${name[0].toUpperCase()}${name.slice(1)} service`, '', table(rowsOf(schema, own)), '');
  }
  const gatewayOwn = Object.keys(gatewaySchema).filter((k) => !common.includes(k));
  out.push('### Gateway', '', table(rowsOf(gatewaySchema, gatewayOwn)), '');
  return out.join('\n');
}

export function renderMetrics(): string {
  return `${['| metric | what it counts |', '|---|---|', ...Object.entries(METRIC_HELP).map(([name, help]) => `| \`${name}\` | ${cell(help)} |`)].join('\n')}\n`;
}

/** Replaces each `<!-- generated:NAME -->…<!-- end:NAME -->` block of `text`. */
export function withGeneratedSections(text: string, schemas: Schemas): string {
  const sections = { settings: () => renderSettings(schemas), metrics: renderMetrics };
  let out = text;
  for (const [name, render] of Object.entries(sections)) {
    const re = new RegExp(`(<!-- generated:${name} [^>]*-->\\n)[\\s\\S]*?(<!-- end:${name} -->)`);
    if (!re.test(out)) throw new Error(`docs/operations.md has no <!-- generated:${name} --> block`);
    out = out.replace(re, (_m, start: string, end: string) => `${start}${render()}${end}`);
  }
  return out;
}
