import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { envFor, type Component, type Topology } from './topology';
import { waitForPort } from './net';
import { waitForServing } from './health';
import { repoRoot } from './paths';

// Runs the system as separate processes, one per service plus the gateway, as
// it runs in production. Used by `npm start` and `npm run bench`.

export interface Ports {
  account: number;
  product: number;
  license: number;
  checkout: number;
  /** The hosted checkout page (HTTP), proxied by the gateway under /checkout. */
  checkoutHttp: number;
  webhook: number;
  gateway: number;
}

export interface RunningSystem {
  gatewayUrl: string;
  addrs: { account: string; product: string; license: string; checkout: string; checkoutPage: string; webhook: string };
  /** Resolves when any process exits on its own (a crash), with its name. */
  crashed: Promise<{ name: Component; code: number | null }>;
  pids: Partial<Record<Component, number>>;
  stop(): Promise<void>;
}

export const entry: Record<Component, string> = {
  account: 'services/account/dist/main.js',
  product: 'services/product/dist/main.js',
  license: 'services/license/dist/main.js',
  checkout: 'services/checkout/dist/main.js',
  webhook: 'services/webhook/dist/main.js',
  gateway: 'gateway/dist/main.js',
};

export function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export async function launchSystem(
  t: Topology,
  ports: Ports,
  logDir: string,
  nodeArgs: Partial<Record<Component, string[]>> = {},
): Promise<RunningSystem> {
  mkdirSync(logDir, { recursive: true });
  const addrs = {
    account: `${t.host}:${ports.account}`,
    product: `${t.host}:${ports.product}`,
    license: `${t.host}:${ports.license}`,
    checkout: `${t.host}:${ports.checkout}`,
    checkoutPage: `http://${t.host}:${ports.checkoutHttp}`,
    webhook: `${t.host}:${ports.webhook}`,
  };
  const gatewayUrl = `http://${t.host}:${ports.gateway}`;
  const envs: Record<Component, Record<string, string>> = {
    account: envFor.account(t, ports.account, process.env.PUBLIC_BASE_URL ?? gatewayUrl),
    product: envFor.product(t, ports.product),
    license: envFor.license(t, ports.license, addrs.product),
    checkout: envFor.checkout(t, ports.checkout, ports.checkoutHttp, addrs, process.env.PUBLIC_BASE_URL ?? gatewayUrl),
    webhook: envFor.webhook(t, ports.webhook),
    gateway: envFor.gateway(t, ports.gateway, addrs),
  };
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

  const order: Component[] = ['account', 'product', 'license', 'checkout', 'webhook', 'gateway'];
  for (const name of order) {
    const logFile = join(logDir, `${name}.log`);
    const { child, exited } = spawnComponent(name, envs[name], logFile, nodeArgs[name]);
    children.set(name, child);
    child.once('exit', (code) => {
      if (!stopping) onCrash({ name, code });
    });
    try {
      if (name === 'gateway') await Promise.race([waitForPort(t.host, ports.gateway, 30_000), exited]);
      else await waitForServing(addrs[name], 60_000, exited);
    } catch (err) {
      stopping = true;
      await stopAll([...order].reverse());
      throw err;
    }
  }

  // Ready means the gateway can reach the account service.
  for (let i = 0; ; i++) {
    const ready = await fetch(`${gatewayUrl}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (i > 100) throw new Error(`the gateway did not become ready; see ${logDir}`);
    await new Promise((r) => setTimeout(r, 100));
  }

  return {
    gatewayUrl,
    addrs,
    crashed,
    pids: Object.fromEntries([...children].map(([name, c]) => [name, c.pid])),
    async stop() {
      stopping = true;
      // Gateway first, so no new work reaches the services while they drain.
      await stopAll(['gateway', 'webhook', 'checkout', 'license', 'product', 'account']);
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
