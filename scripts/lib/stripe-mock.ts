import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { untilListening } from './tool-process';

// stripe-mock is Stripe's own mock of its API (answers shaped by Stripe's
// OpenAPI document; it stores nothing and sends no webhooks). The tests point
// the checkout service's Stripe SDK at it. Built once with Go from the module
// proxy, cached next to FerretDB in ~/.cache/licensing.
export const STRIPE_MOCK_VERSION = 'v0.203.0';

const cacheDir = join(
  process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'),
  'licensing',
  `stripe-mock-${STRIPE_MOCK_VERSION}`,
);
const cachedBinary = join(cacheDir, 'stripe-mock');

export function stripeMockBinary(log: (line: string) => void = console.log): string {
  if (existsSync(cachedBinary)) return cachedBinary;
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
  } catch {
    throw new Error(
      'stripe-mock is needed by the checkout tests and Go is not installed to build it: install Go >= 1.22, or set TEST_STRIPE_MOCK_URL to a running stripe-mock.',
    );
  }
  log(`Building stripe-mock ${STRIPE_MOCK_VERSION} with Go (first run only)...`);
  mkdirSync(cacheDir, { recursive: true });
  execFileSync('go', ['install', `github.com/stripe/stripe-mock@${STRIPE_MOCK_VERSION}`], {
    cwd: cacheDir,
    env: { ...process.env, GOBIN: cacheDir, GOTOOLCHAIN: 'local' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  log(`stripe-mock built at ${cachedBinary}`);
  return cachedBinary;
}

export interface StripeMock {
  /** http://127.0.0.1:<port>: give it to STRIPE_API_URL. */
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts stripe-mock over plain HTTP on `port` (HTTPS stays off). */
export async function startStripeMock(opts: { port: number; log?: (line: string) => void }): Promise<StripeMock> {
  const bin = stripeMockBinary(opts.log);
  const child = spawn(bin, ['-http-port', String(opts.port)], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  const stop = await untilListening(child, 'stripe-mock', opts.port);
  return {
    url: `http://127.0.0.1:${opts.port}`,
    process: child,
    stop,
  };
}
