import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { ConfigError, loadConfig, type Schema } from '@licensing/runtime';
import { accountSchema } from '../../services/account/src/config';
import { productSchema } from '../../services/product/src/config';
import { licenseSchema } from '../../services/license/src/config';
import { checkoutSchema } from '../../services/checkout/src/config';
import { webhookSchema } from '../../services/webhook/src/config';
import { gatewaySchema } from '../../gateway/src/config';

export const root = join(__dirname, '..', '..');
export const read = (path: string) => readFileSync(join(root, path), 'utf8');
export const yamlOf = (path: string) => parse(read(path), { merge: true });
export const yamlDocsOf = (path: string) => parseAllDocuments(read(path)).map((d) => d.toJS());

export const components = ['account', 'product', 'license', 'checkout', 'webhook', 'gateway'] as const;
export type ComponentName = (typeof components)[number];
export const schemas: Record<ComponentName, Schema> = {
  account: accountSchema,
  product: productSchema,
  license: licenseSchema,
  checkout: checkoutSchema,
  webhook: webhookSchema,
  gateway: gatewaySchema,
};
export const entryOf = (c: ComponentName) => (c === 'gateway' ? 'gateway/dist/main.js' : `services/${c}/dist/main.js`);

/** Settings a component cannot start without (no default). */
export const requiredSettings = (c: ComponentName) =>
  Object.entries(schemas[c])
    .filter(([, s]) => s.default === undefined)
    .map(([name]) => name);
export const secretSettings = (c: ComponentName) =>
  Object.entries(schemas[c])
    .filter(([, s]) => s.secret)
    .map(([name]) => name);
/** A secret with a default may be left out of a deployment (e.g. FERRETDB_POSTGRESQL_URL, which only the dev store uses); given, it must be a file. */
export const optionalSecret = (c: ComponentName, name: string) =>
  (schemas[c] as Record<string, { default?: unknown }>)[name].default !== undefined;

/**
 * Loads a component's config from a manifest's environment the way the
 * process would, with NAME_FILE secrets standing in for their values.
 */
export function configFrom(c: ComponentName, env: Record<string, string>): Record<string, unknown> {
  const resolved: Record<string, string> = { ...env };
  for (const name of secretSettings(c)) if (env[`${name}_FILE`]) resolved[name] = `value-of-${name}`;
  try {
    return loadConfig(schemas[c], resolved) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof ConfigError) throw new Error(`${c}: ${err.message}`);
    throw err;
  }
}

/** "host:port", "dns:///host:port" or a URL → host and port. */
export function target(addr: string): { host: string; port: number } {
  const bare = addr.replace(/^dns:\/\/\//, '');
  if (/^[a-z]+:\/\//.test(bare)) {
    const u = new URL(bare);
    return { host: u.hostname, port: Number(u.port) };
  }
  const [host, port] = bare.split(':');
  return { host, port: Number(port) };
}
