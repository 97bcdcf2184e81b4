import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { connect } from 'nats';
// By path, not the package: the run's global set-up and teardown load this before anything is built.
import { natsServers } from '../../packages/runtime/src/events/nats-servers';
import type { Addrs, Topology } from '../../scripts/lib/topology';

// The handle files of the systems a run's jest workers share (shared-stack.ts): where each worker's system
// is, which processes are its, and how the run's global teardown stops them all.

/** What a handle file records of a running shared system. */
export interface Handle {
  topology: Topology;
  gatewayUrl: string;
  addrs: Addrs;
  pids: number[];
  logDir: string;
  /** The jest run's main process (the worker's parent): a handle whose owner is gone was left by an aborted run. */
  owner: number;
}

/** Where the run's shared systems leave their handles (TEST_RUN_ID is the run's, set by the global set-up). */
export const sharedStackDir = (runId = process.env.TEST_RUN_ID ?? 'local'): string =>
  join(tmpdir(), 'licensing-shared-stacks', runId);

const handleFile = () => join(sharedStackDir(), `worker-${process.env.JEST_WORKER_ID ?? '1'}.json`);

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** This worker's system, if an earlier file started one and every process of it still runs. */
export function runningHandle(): Handle | undefined {
  if (!existsSync(handleFile())) return undefined;
  const handle = JSON.parse(readFileSync(handleFile(), 'utf8')) as Handle;
  return handle.pids.every(alive) ? handle : undefined;
}

export function saveHandle(handle: Handle): void {
  mkdirSync(sharedStackDir(), { recursive: true });
  writeFileSync(handleFile(), JSON.stringify(handle));
}

/** Each process's group (they run detached) asked to stop, then killed if it has not within `graceMs`. */
async function stopProcesses(pids: number[], graceMs = 10_000): Promise<void> {
  const signal = (pid: number, sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      /* already gone */
    }
  };
  for (const pid of pids) signal(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const pid of pids.filter(alive)) signal(pid, 'SIGKILL');
}

/** Stops the shared systems an aborted run left running (its jest process gone, so no teardown ran). */
export async function stopOrphanedSharedStacks(): Promise<void> {
  const root = dirname(sharedStackDir());
  if (!existsSync(root)) return;
  for (const runId of readdirSync(root)) {
    const handles = handlesOf(runId);
    if (handles.length && handles.every((h) => !alive(h.owner))) await stopSharedStacks(runId);
  }
}

const handlesOf = (runId: string): Handle[] => {
  const dir = sharedStackDir(runId);
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as Handle);
};

/**
 * Stops every shared system of the run (the global teardown, after the workers are gone): their processes,
 * then their event streams. Their databases go with the run's store.
 */
export async function stopSharedStacks(runId = process.env.TEST_RUN_ID ?? 'local'): Promise<void> {
  const dir = sharedStackDir(runId);
  if (!existsSync(dir)) return;
  const handles = handlesOf(runId);
  await stopProcesses(handles.flatMap((h) => h.pids));
  for (const h of handles) {
    const nc = await connect({ servers: natsServers(h.topology.natsUrl) }).catch(() => undefined);
    if (!nc) continue;
    const jsm = await nc.jetstreamManager();
    await jsm.streams.delete(h.topology.stream).catch(() => undefined);
    await nc.close();
  }
  rmSync(dir, { recursive: true, force: true });
}
