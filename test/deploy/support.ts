import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { ConfigError, loadConfig } from '@licensing/runtime';
import {
  addrSetting,
  calleesOf,
  componentNames,
  gateway,
  pageUrlSetting,
  services,
  web,
  type Component,
} from '../../scripts/lib/components';
import { schemas } from '../support/schemas';

export const root = join(__dirname, '..', '..');
export const read = (path: string) => readFileSync(join(root, path), 'utf8');
export const yamlOf = (path: string) => parse(read(path), { merge: true });
export const yamlDocsOf = (path: string) => parseAllDocuments(read(path)).map((d) => d.toJS());

/** Every component's name, from components.json: the deploy files must have exactly these. */
export const components: Component[] = componentNames;
/** The components that reach NATS (the web component follows no events and publishes none). */
export const natsComponents: Component[] = componentNames.filter((c) => 'NATS_URL' in schemas[c]);
export { schemas, type Component };
export { componentOf } from '../../scripts/lib/components';

/**
 * Every address the wiring in components.json implies: [component, setting, service] for each
 * service a component calls (its callers list), and the gateway's URL of each service's web page.
 */
export const grpcAddresses: [Component, string, Component][] = components.flatMap((c) =>
  calleesOf(c).map((s): [Component, string, Component] => [c, addrSetting(s), s]),
);
/** The HTTP servers the gateway proxies to: a service's (checkout's Stripe receiver) and the web component's pages. */
export const pageAddresses: [Component, string, Component][] = [...services, ...(web ? [web] : [])]
  .filter((s) => s.ports.http !== undefined)
  .map((s) => [gateway.name, pageUrlSetting(s.name), s.name]);

/** Settings a component cannot start without (no default). */
export const requiredSettings = (c: Component) =>
  Object.entries(schemas[c])
    .filter(([, s]) => s.default === undefined)
    .map(([name]) => name);
export const secretSettings = (c: Component) =>
  Object.entries(schemas[c])
    .filter(([, s]) => s.secret)
    .map(([name]) => name);
/** A secret with a default may be left out of a deployment (e.g. FERRETDB_POSTGRESQL_URL, which only the dev store uses); given, it must be a file. */
export const optionalSecret = (c: Component, name: string) =>
  (schemas[c] as Record<string, { default?: unknown }>)[name].default !== undefined;

/**
 * Loads a component's config from a manifest's environment the way the
 * process would, with NAME_FILE secrets standing in for their values.
 */
export function configFrom(c: Component, env: Record<string, string>): Record<string, unknown> {
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
