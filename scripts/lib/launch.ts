import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { envFor, pageKey, type Addrs, type Topology } from './topology';
import { components, gateway, services, web, type Component } from './components';
import { freePort, waitForPort } from './net';
import { waitForServing } from './health';
import { repoRoot } from './paths';
import { setUpEvents } from './events-setup';

// Runs the system as separate processes, one per service plus the web component and the gateway, as
// it runs in production. Used by `npm start` and `npm run bench`.

/** Each component's port (a service's gRPC port, the gateway's and the web component's HTTP port) and a service's web server port. */
export type Ports = Record<Component, { port: number; http?: number }>;

export interface RunningSystem {
  gatewayUrl: string;
  addrs: Addrs;
  /** Resolves when any process exits on its own (a crash), with its name. */
  crashed: Promise<{ name: Component; code: number | null }>;
  pids: Partial<Record<Component, number>>;
  stop(): Promise<void>;
}

/** Every component on a free port (benchmarks). */
export async function freePorts(): Promise<Ports> {
  const out: Ports = {};
  for (const c of components)
    out[c.name] = {
      port: await freePort(),
      ...(c.kind === 'service' && c.ports.http ? { http: await freePort() } : {}),
    };
  return out;
}

/** What a process of each component runs (components.json). */
export const entry: Record<Component, string> = Object.fromEntries(components.map((c) => [c.name, c.entry]));

export function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Ready means the gateway can reach the account service. */
async function waitForGatewayReady(gatewayUrl: string, logDir: string): Promise<void> {
  for (let i = 0; ; i++) {
    const ready = await fetch(`${gatewayUrl}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return;
    if (i > 100) throw new Error(`the gateway did not become ready; see ${logDir}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface LaunchOptions {
  /** Node's own flags for a component's process (a benchmark's CPU profile). */
  nodeArgs?: Partial<Record<Component, string[]>>;
  /** Settings a component gets over the topology's (a test system's generous throttles). */
  extraEnv?: Partial<Record<Component, Record<string, string>>>;
  /**
   * The launcher may end before the processes: they are not waited for, and their crash is not watched
   * (the test stack a jest worker's files share, which the run's global teardown stops by pid).
   */
  unref?: boolean;
  /** Every component started at once instead of in components.json's order (a test system: quicker). */
  atOnce?: boolean;
}

/** Each service's gRPC address and each page server's URL, from the ports the components will take. */
function addressesOf(host: string, ports: Ports): Addrs {
  const portOf = (name: Component) => {
    if (!ports[name]) throw new Error(`no port for ${name}`);
    return ports[name];
  };
  const addrs: Addrs = {};
  for (const s of services) {
    addrs[s.name] = `${host}:${portOf(s.name).port}`;
    if (s.ports.http !== undefined) addrs[pageKey(s.name)] = `http://${host}:${portOf(s.name).http}`;
  }
  if (web) addrs[pageKey(web.name)] = `http://${host}:${portOf(web.name).port}`;
  portOf(gateway.name);
  return addrs;
}

/** Stops the named processes one after another: SIGTERM, SIGKILL after 20 s. */
async function stopInOrder(children: Map<Component, ChildProcess>, names: Component[]): Promise<void> {
  for (const name of names) {
    const child = children.get(name);
    if (!child || child.exitCode !== null || child.signalCode !== null) continue;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 20_000).unref();
    });
  }
}

export async function launchSystem(
  t: Topology,
  ports: Ports,
  logDir: string,
  { nodeArgs = {}, extraEnv = {}, unref = false, atOnce = false }: LaunchOptions = {},
): Promise<RunningSystem> {
  mkdirSync(logDir, { recursive: true });
  const addrs = addressesOf(t.host, ports);
  const gatewayUrl = `http://${t.host}:${ports[gateway.name].port}`;
  const publicBaseUrl = process.env.PUBLIC_BASE_URL ?? gatewayUrl;
  const envOf = (name: Component) => ({
    ...envFor(name, t, { port: ports[name].port, httpPort: ports[name].http, addrs, publicBaseUrl }),
    ...extraEnv[name],
  });
  const children = new Map<Component, ChildProcess>();
  let stopping = false;
  let onCrash!: (c: { name: Component; code: number | null }) => void;
  const crashed = new Promise<{ name: Component; code: number | null }>((resolve) => (onCrash = resolve));

  const stopAll = (names: Component[]) => stopInOrder(children, names);

  // The deployment-time set-up first: the event stream, which no component may create or change.
  await setUpEvents(t);
  const order = components.map((c) => c.name);
  /** Starts one component and waits until it serves. */
  const startOne = async (name: Component) => {
    const logFile = join(logDir, `${name}.log`);
    const { child, exited } = spawnComponent(name, envOf(name), logFile, nodeArgs[name]);
    children.set(name, child);
    if (unref) child.unref();
    else
      child.once('exit', (code) => {
        if (!stopping) onCrash({ name, code });
      });
    if (name === gateway.name || name === web?.name)
      await Promise.race([waitForPort(t.host, ports[name].port, 30_000), exited]);
    else await waitForServing(addrs[name], 60_000, exited);
  };
  try {
    // components.json's order: each service is serving before anything that calls it starts. All at
    // once when asked: every address is fixed before any starts, and a gRPC client connects on its
    // first call, so nothing needs its peers serving to start.
    if (atOnce) await Promise.all(order.map(startOne));
    else for (const name of order) await startOne(name);
  } catch (err) {
    stopping = true;
    await stopAll([...order].reverse());
    throw err;
  }

  await waitForGatewayReady(gatewayUrl, logDir);

  return {
    gatewayUrl,
    addrs,
    crashed,
    pids: Object.fromEntries([...children].map(([name, c]) => [name, c.pid])),
    async stop() {
      stopping = true;
      // Gateway first, so no new work reaches the services while they drain.
      await stopAll([...order].reverse());
    },
  };
}

/**
 * One component as its own process (its own process group, so a terminal's
 * Ctrl-C reaches only the launcher, which then stops everything in order),
 * output appended to `logFile` by the process itself (nothing passes through
 * the launcher, which may end first). `exited` rejects if the process ends.
 */
export function spawnComponent(
  name: Component,
  env: Record<string, string>,
  logFile: string,
  nodeArgs: string[] = [],
): { child: ChildProcess; exited: Promise<never> } {
  const out = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--enable-source-maps', ...nodeArgs, join(repoRoot(), entry[name])], {
    env: { ...process.env, ...env },
    stdio: ['ignore', out, out],
    detached: true,
  });
  closeSync(out);
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) =>
      reject(new Error(`${name} exited (${signal ?? `code ${code}`}); last lines of ${logFile}:\n${tail(logFile)}`)),
    ),
  );
  exited.catch(() => undefined);
  return { child, exited };
}
