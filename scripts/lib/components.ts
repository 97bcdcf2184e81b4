// The typed view of components.json, the one list of the system's components.
// Build (scripts/build.mjs reads the JSON itself: it runs before anything is
// built), launch, topology, the test stack, the docs and the deploy tests all
// go through it, so adding a component is one entry there; the tests then name
// whatever else still lacks it (deploy files, NATS users, its config schema).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { internalCallers, type InternalCaller } from '@licensing/runtime';
import { repoRoot } from './paths';

/** A component's name in components.json ("account", …, "gateway"). */
export type Component = string;

export interface ComponentPorts {
  /** A service's gRPC port. */
  grpc?: number;
  /** A service's web server (checkout's Stripe receiver, proxied by the gateway), the web component's pages, or the gateway's plain HTTP port. */
  http?: number;
  /** The gateway's HTTPS port (compose, where it terminates TLS itself). */
  https?: number;
  /** Prometheus /metrics. */
  metrics: number;
}

export interface ComponentEntry {
  name: Component;
  /** How the docs call it ("Licence service"): docs/architecture.md has a bullet with this title. */
  title: string;
  /** service: gRPC; web: the pages people see (HTTP, reached through the gateway); gateway: the machine API. */
  kind: 'service' | 'web' | 'gateway';
  /** Its workspace: package.json, src/ (main.ts, config.ts) and dist/. */
  folder: string;
  /** What a process of it runs (node <entry>): compose, Kubernetes and `npm start`. */
  entry: string;
  /** Defaults of `npm start` and of the config schemas (a service's metrics: its gRPC port + 1000), below DEFAULT_PORTS_BELOW. */
  ports: ComponentPorts;
  /** Ports in docker-compose.yml and deploy/k8s, the same in both so dashboards and alerts fit either. */
  deployPorts: ComponentPorts;
  /** Who may call this service over gRPC (its INTERNAL_CALLERS); each service's access.ts then says which methods. */
  callers: InternalCaller[];
  /** On compose's public network: the gateway (its published port) and services that call out (Stripe, webhook endpoints). */
  publicNetwork: boolean;
}

/**
 * Every default port lies below this: under the range the kernel hands out to outgoing connections
 * (Linux 32768–60999; macOS and Windows from 49152), where any process's connection (or a previous
 * run's, still closing) may hold a port and a restarted `npm start` would fail with "address already
 * in use", and under the band the tests take free ports from (just below that range, scripts/lib/net.ts).
 */
export const DEFAULT_PORTS_BELOW = 20_000;

/** components.json as read, checked for what every reader relies on (throws naming the problem). */
export function parseRegistry(text: string): ComponentEntry[] {
  const list = (JSON.parse(text) as { components?: ComponentEntry[] }).components;
  if (!Array.isArray(list) || list.length === 0) throw new Error('components.json: no "components" list');
  const problems: string[] = [];
  const names = new Set<string>();
  for (const c of list) {
    const where = `components.json: ${c.name ?? JSON.stringify(c)}`;
    if (!/^[a-z][a-z0-9]*$/.test(c.name ?? '')) problems.push(`${where}: name must be lower-case letters and digits`);
    if (names.has(c.name)) problems.push(`${where}: listed twice`);
    names.add(c.name);
    if (!['service', 'web', 'gateway'].includes(c.kind))
      problems.push(`${where}: kind must be service, web or gateway`);
    if (!c.title || !c.folder) problems.push(`${where}: title and folder are required`);
    if (c.entry !== `${c.folder}/dist/main.js`) problems.push(`${where}: entry must be ${c.folder}/dist/main.js`);
    for (const ports of [c.ports, c.deployPorts]) {
      if (!ports || typeof ports.metrics !== 'number') problems.push(`${where}: ports and deployPorts need metrics`);
      else if (c.kind === 'service' && typeof ports.grpc !== 'number') problems.push(`${where}: a service needs grpc`);
      else if (c.kind !== 'service' && typeof ports.http !== 'number')
        problems.push(`${where}: the ${c.kind} component needs http`);
    }
    for (const port of Object.values(c.ports ?? {}))
      if (typeof port === 'number' && (port < 1024 || port >= DEFAULT_PORTS_BELOW))
        problems.push(
          `${where}: default port ${port} must lie from 1024 to ${DEFAULT_PORTS_BELOW - 1}, below the ports outgoing connections take (32768–60999)`,
        );
    if (c.kind === 'service' && c.ports?.metrics !== (c.ports?.grpc ?? 0) + 1000)
      problems.push(`${where}: a service's default metrics port is its gRPC port + 1000 (serviceSchema)`);
    for (const caller of c.callers ?? [])
      if (!(internalCallers as readonly string[]).includes(caller))
        problems.push(
          `${where}: caller ${caller} is not in internalCallers (packages/runtime/src/grpc/internal-auth.ts)`,
        );
    if (c.kind !== 'service' && c.callers?.length)
      problems.push(`${where}: nothing calls the ${c.kind} component over gRPC`);
    if (typeof c.publicNetwork !== 'boolean') problems.push(`${where}: publicNetwork must be true or false`);
  }
  if (list.filter((c) => c.kind === 'gateway').length !== 1) problems.push('components.json: exactly one gateway');
  if (list.filter((c) => c.kind === 'web').length > 1) problems.push('components.json: at most one web component');
  if (list[list.length - 1]?.kind !== 'gateway')
    problems.push('components.json: the gateway comes last (it starts once every service it calls is serving)');
  if (problems.length) throw new Error(problems.join('\n'));
  return list.map((c) => ({ ...c, callers: c.callers ?? [] }));
}

/** Every component, in start order (the gateway last). */
export const components: readonly ComponentEntry[] = parseRegistry(
  readFileSync(join(repoRoot(), 'components.json'), 'utf8'),
);
export const componentNames: Component[] = components.map((c) => c.name);
/** The gRPC services, in start order. */
export const services: readonly ComponentEntry[] = components.filter((c) => c.kind === 'service');
export const gateway: ComponentEntry = components.find((c) => c.kind === 'gateway')!;
/** The web component (the pages people see), whose URL the gateway proxies /dashboard and /portal to. */
export const web: ComponentEntry | undefined = components.find((c) => c.kind === 'web');

export function componentOf(name: Component): ComponentEntry {
  const c = components.find((x) => x.name === name);
  if (!c) throw new Error(`no component "${name}" in components.json (${componentNames.join(', ')})`);
  return c;
}

/** The services `name` calls over gRPC: those that list it among their callers. */
export const calleesOf = (name: Component | 'operator'): Component[] =>
  services.filter((s) => s.callers.includes(name as InternalCaller)).map((s) => s.name);

/** Whether a component calls other services (it then has an INTERNAL_TOKEN of its own). */
export const isCaller = (name: Component): boolean => calleesOf(name).length > 0;

const upper = (name: Component) => name.toUpperCase();
/** The setting holding a service's gRPC address in its callers' configuration. */
export const addrSetting = (service: Component): string => `${upper(service)}_GRPC_ADDR`;
/** The gateway's setting holding the URL of a component's HTTP server it proxies to (a service with an http port, the web component). */
export const pageUrlSetting = (service: Component): string => `${upper(service)}_PAGE_URL`;
/** The `npm start` variables that move a component's ports. */
export const portVariable = (c: ComponentEntry): string =>
  c.kind === 'gateway' ? 'PORT' : c.kind === 'web' ? httpPortVariable(c) : `${upper(c.name)}_GRPC_PORT`;
export const httpPortVariable = (c: ComponentEntry): string => `${upper(c.name)}_HTTP_PORT`;
/** Where a component's config schema is: `<folder>/src/config.ts` (dist/config.js built) exports `<name>Schema`. */
export const schemaExport = (c: ComponentEntry): string => `${c.name}Schema`;
/** A service's own database (MONGO_DB's default; the MongoDB user of the same name reaches only it). */
export const databaseOf = (service: Component): string => `licensing_${service}`;
