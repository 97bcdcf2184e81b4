import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
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

export async function launchSystem(
  t: Topology,
  ports: Ports,
  logDir: string,
  nodeArgs: Partial<Record<Component, string[]>> = {},
): Promise<RunningSystem> {
  mkdirSync(logDir, { recursive: true });
  const portOf = (name: Component) => {
    if (!ports[name]) throw new Error(`no port for ${name}`);
    return ports[name];
  };
  const addrs: Addrs = {};
  for (const s of services) {
    addrs[s.name] = `${t.host}:${portOf(s.name).port}`;
    if (s.ports.http !== undefined) addrs[pageKey(s.name)] = `http://${t.host}:${portOf(s.name).http}`;
  }
  if (web) addrs[pageKey(web.name)] = `http://${t.host}:${portOf(web.name).port}`;
  const gatewayUrl = `http://${t.host}:${portOf(gateway.name).port}`;
  const publicBaseUrl = process.env.PUBLIC_BASE_URL ?? gatewayUrl;
  const envOf = (name: Component) =>
    envFor(name, t, { port: ports[name].port, httpPort: ports[name].http, addrs, publicBaseUrl });
  const children = new Map<Component, ChildProcess>();
  let stopping = false;
  let onCrash!: (c: { name: Component; code: number | null }) => void;
  const crashed = new Promise<{ name: Component; code: number | null }>((resolve) => (onCrash = resolve));

  const stopAll = async (names: Component[]) => {
    for (const name of names) {
      const child = children.get(name);
      if (!child || child.exitCode !== null || child.signalCode !== null) continue;
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 20_000).unref();
      });
    }
  };

  // The deployment-time set-up first: the event stream, which no component may create or change.
  await setUpEvents(t);
  // components.json's order: each service is serving before anything that calls it starts.
  const order = components.map((c) => c.name);
  for (const name of order) {
    const logFile = join(logDir, `${name}.log`);
    const { child, exited } = spawnComponent(name, envOf(name), logFile, nodeArgs[name]);
    children.set(name, child);
    child.once('exit', (code) => {
      if (!stopping) onCrash({ name, code });
    });
    try {
      if (name === gateway.name || name === web?.name)
        await Promise.race([waitForPort(t.host, ports[name].port, 30_000), exited]);
      else await waitForServing(addrs[name], 60_000, exited);
    } catch (err) {
      stopping = true;
      await stopAll([...order].reverse());
      throw err;
    }
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
 * output appended to `logFile`. `exited` rejects if the process ends.
 */
export function spawnComponent(
  name: Component,
  env: Record<string, string>,
  logFile: string,
  nodeArgs: string[] = [],
): { child: ChildProcess; exited: Promise<never> } {
  const out = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(process.execPath, ['--enable-source-maps', ...nodeArgs, join(repoRoot(), entry[name])], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) =>
      reject(new Error(`${name} exited (${signal ?? `code ${code}`}); last lines of ${logFile}:\n${tail(logFile)}`)),
    ),
  );
  exited.catch(() => undefined);
  return { child, exited };
}
