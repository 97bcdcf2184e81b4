import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { AccountServiceClient } from '@licensing/proto';
import { createClient } from '@licensing/runtime';
import { start as startGateway } from '../../gateway/src/main';
import { freePorts, launchSystem } from '../../scripts/lib/launch';
import { credentialOf, envFor, type Addrs, type Topology } from '../../scripts/lib/topology';
import { EventLog } from './events';
import { client, testTopology } from './stack';
import { runningHandle, saveHandle, sharedStackDir, type Handle } from './shared-stack-handles';

// The system the files of one jest worker share: every service, the web component and the gateway as
// processes from the build (dist/), started by the first file of the worker that asks for it and found
// again by the next ones through a handle file (sharedStackDir()). Files keep apart by accounts of their
// own, never by configuration: a file that needs other settings, a test clock, a service stopped or a
// mail inbox of its own starts its own stack (stack.ts) and says why at its top. The run's global
// teardown (global-teardown.ts) stops every shared stack of the run by its pids.

/** Settings of the shared system beyond a test stack's: several files sign up through the dashboard from one address. */
const SHARED_SETTINGS: Record<string, string> = {
  SIGNUPS_PER_ADDRESS: '1000',
  SIGNUPS_PER_EMAIL: '1000',
  CHECKOUT_REQUESTS_PER_MINUTE: '1000',
};

/** What a file sees of the shared system. */
export interface SharedStack {
  url: string;
  topology: Topology;
  addrs: Addrs;
  admin: ReturnType<typeof createClient<AccountServiceClient>>['call'];
  /** A new account (enterprise by default, so a file about something else never meets a limit). */
  newAccount(plan?: string): Promise<{ accountId: string; apiKey: string }>;
  /** Another gateway, in this file's process, over the shared services: stopped when the file ends. */
  extraGateway(config?: Record<string, string>): Promise<{ url: string; stop(): Promise<void> }>;
}

/**
 * The shared system runs for the whole run, mostly idle while its worker runs files with stacks of their
 * own: its safety-net scans and flushes run every second, not five times a second (a change publishes its
 * events at once either way; only a test clock or a fault would wait on these, and such files start their own).
 */
const SHARED_INTERVALS = {
  outboxIntervalMs: 1000,
  statsFlushIntervalMs: 1000,
  expirySweepIntervalMs: 1000,
  webhookDispatchIntervalMs: 500,
};

async function launch(): Promise<Handle> {
  const topology = testTopology(SHARED_INTERVALS);
  const logDir = join(sharedStackDir(), `logs-${process.env.JEST_WORKER_ID ?? '1'}-${randomBytes(2).toString('hex')}`);
  const system = await launchSystem(topology, await freePorts(), logDir, {
    unref: true,
    atOnce: true,
    extraEnv: { web: SHARED_SETTINGS },
  });
  const handle: Handle = {
    topology,
    gatewayUrl: system.gatewayUrl,
    addrs: system.addrs,
    pids: Object.values(system.pids).filter((pid): pid is number => pid !== undefined),
    logDir,
    owner: process.ppid,
  };
  saveHandle(handle);
  return handle;
}

/** The shared system as a file holds it: close() when the file ends (the system runs on). */
export type OpenSharedStack = SharedStack & { close(): Promise<void> };

/** The shared system for this file: found running, or started. */
export async function openSharedStack(): Promise<OpenSharedStack> {
  const handle = runningHandle() ?? (await launch());
  const t = handle.topology;
  const admin = createClient(AccountServiceClient, handle.addrs.account, credentialOf(t, 'operator'));
  const extras: { stop(): Promise<void> }[] = [];
  return {
    url: handle.gatewayUrl,
    topology: t,
    addrs: handle.addrs,
    admin: admin.call,
    async newAccount(plan = 'enterprise') {
      const out = await admin.call.createAccount({ name: `Vendor ${randomBytes(2).toString('hex')}`, plan });
      return { accountId: out.account!.id, apiKey: out.secret };
    },
    async extraGateway(config = {}) {
      const env = { ...envFor('gateway', t, { port: 0, addrs: handle.addrs }), ...config };
      const g = await startGateway({ env });
      extras.push(g);
      return { url: g.url, stop: g.stop };
    },
    async close() {
      for (const g of extras.reverse()) await g.stop().catch(() => undefined);
      admin.close();
    },
  };
}

export interface SharedFixture {
  stack: SharedStack;
  /** HTTP client authenticated as `accountId`. */
  api: ReturnType<typeof client>;
  accountId: string;
  /** The account's full API key (what `api` sends). */
  apiKey: string;
  /** The events of this file's accounts (every account made through `stack.newAccount`) on the shared stream. */
  events: EventLog;
}

/** The shared system with an account of this file's own, and a reader of its event stream. */
export function useSharedStack(): SharedFixture {
  const f = {} as SharedFixture & { close(): Promise<void> };
  beforeAll(async () => {
    const shared = await openSharedStack();
    const mine = new Set<string>();
    const newAccount = shared.newAccount;
    shared.newAccount = async (plan) => {
      const made = await newAccount(plan);
      mine.add(made.accountId);
      return made;
    };
    f.stack = shared;
    f.close = shared.close;
    const acct = await shared.newAccount();
    f.accountId = acct.accountId;
    f.apiKey = acct.apiKey;
    f.api = client(shared.url, acct.apiKey);
    f.events = await EventLog.open(shared.topology.natsUrl, shared.topology.stream, (e) => mine.has(e.account_id));
  });
  afterAll(async () => {
    await f.events?.close();
    await f.close?.();
  });
  return f;
}
