import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitForPort } from '../../scripts/lib/net';
import { spawnComponent } from '../../scripts/lib/launch';
import { envFor } from '../../scripts/lib/topology';
import { client, startStack, type Stack } from '../support/stack';
import { eventually } from '../support/eventually';
import { OtlpReceiver } from '../support/otlp-receiver';

// Tracing off costs nothing (docs/operations.md, "Tracing"): with no OTLP endpoint set, a component's
// process never loads the OpenTelemetry SDK or an exporter, not at start and not while it answers.
// The gateway and a service run as their own processes (their dist entries, as deployments run them),
// each preloaded with test/support/loaded-modules.cjs, which writes the modules it loaded at exit; the
// same processes with an endpoint set load the SDK and send their spans.

/** The OpenTelemetry SDK and its exporters (not @opentelemetry/api, whose no-op the code holds). */
const SDK = /\/node_modules\/@opentelemetry\/(sdk-[^/]+|exporter-[^/]+|otlp-[^/]+|resources)\//;
const sdkPackagesOf = (modules: string[]) =>
  [...new Set(modules.map((m) => SDK.exec(m)?.[1]).filter((p): p is string => p !== undefined))].sort();

let stack: Stack;
let otlp: OtlpReceiver;
let apiKey: string;
let productId: string;
let key: string;
const dir = mkdtempSync(join(tmpdir(), 'licensing-tracing-off-'));
const preload = join(__dirname, '..', 'support', 'loaded-modules.cjs');
let runs = 0;
/** The service processes this file starts, killed at the end if a failed test left one running. */
const children: ChildProcess[] = [];

beforeAll(async () => {
  otlp = await OtlpReceiver.start();
  stack = await startStack(); // no OTEL_* anywhere: tracing off
  ({ apiKey } = await stack.newAccount());
  const api = client(stack.url, apiKey);
  productId = (await api('POST', '/api/v1/products', { name: 'Untraced' })).body.id;
  const issued = await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'ada@example.com' });
  expect(issued.status).toBe(201);
  key = issued.body.license_key;
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await stack?.stop();
  await otlp?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The environment that preloads the recorder and says where it writes. */
function recording(): { env: Record<string, string>; modules: () => string[] } {
  const file = join(dir, `modules-${++runs}.json`);
  return {
    env: { NODE_OPTIONS: `--require ${preload}`, LOADED_MODULES_FILE: file },
    modules: () => {
      if (!existsSync(file)) throw new Error(`the process wrote no ${file}: did it exit gracefully?`);
      return JSON.parse(readFileSync(file, 'utf8')) as string[];
    },
  };
}

/** Tracing's settings: none (off, even if this shell has some), or every component's spans to the receiver. */
const otelOf = (on: boolean): Record<string, string> =>
  on ? otlp.env() : { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' };

/** A gateway process answers validations (the hot path) and stops on SIGTERM: the modules it loaded. */
async function gatewayRun(on: boolean): Promise<string[]> {
  const rec = recording();
  const gw = await stack.gatewayProcess({ ...otelOf(on), ...rec.env });
  const own = client(gw.url, apiKey);
  for (let i = 0; i < 5; i++) {
    const res = await own('GET', `/api/v1/licenses/validate?license_key=${encodeURIComponent(key)}`);
    expect([res.status, res.body.code]).toEqual([200, 'valid']);
  }
  expect(await gw.stop()).toBe(0);
  return rec.modules();
}

/** A licence service process over the stack's stores serves a validation, then stops on SIGTERM. */
async function serviceRun(on: boolean): Promise<string[]> {
  const rec = recording();
  const port = await freePort();
  const env = { ...envFor('license', stack.topology, { port, addrs: stack.addrs }), ...otelOf(on), ...rec.env };
  const { child, exited } = spawnComponent('license', env, join(dir, `license-${runs}.log`));
  children.push(child);
  await Promise.race([waitForPort('127.0.0.1', port, 30_000), exited]);
  // A gateway of this process's own (stopped with the stack), traced when tracing is on, so the
  // service's server spans continue its traces. A licence issued through it is this process's work
  // (no cache answers an issuance), and so is its first validation.
  const gw = await stack.extraGateway({ LICENSE_GRPC_ADDR: `127.0.0.1:${port}`, ...otelOf(on) });
  const own = client(gw.url, apiKey);
  const issued = await own('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'bo@example.com' });
  expect(issued.status).toBe(201);
  const res = await own('GET', `/api/v1/licenses/validate?license_key=${encodeURIComponent(issued.body.license_key)}`);
  expect([res.status, res.body.code]).toEqual([200, 'valid']);
  const gone = once(child, 'exit') as Promise<[number | null]>;
  child.kill('SIGTERM');
  expect((await gone)[0]).toBe(0);
  return rec.modules();
}

it('off (no endpoint): the gateway process never loads the SDK or an exporter, at start or on the hot path', async () => {
  const modules = await gatewayRun(false);
  // What it loaded is recorded (its entry and our tracing module are there): the SDK is not.
  expect(modules.some((m) => m.endsWith('/gateway/dist/main.js'))).toBe(true);
  expect(modules.some((m) => m.endsWith('/packages/runtime/dist/observability/tracing.js'))).toBe(true);
  expect(modules.filter((m) => m.includes('/observability/tracing-sdk.js'))).toEqual([]);
  expect(sdkPackagesOf(modules)).toEqual([]);
});

it('off: a service process (the licence service) never loads it either', async () => {
  const modules = await serviceRun(false);
  expect(modules.some((m) => m.endsWith('/services/license/dist/main.js'))).toBe(true);
  expect(sdkPackagesOf(modules)).toEqual([]);
});

it('on (an endpoint set): the same processes load the SDK and its exporter, and send their spans', async () => {
  const servicesSending = () => [...new Set(otlp.spans.map((s) => s.service))];
  const gateway = await gatewayRun(true);
  expect(sdkPackagesOf(gateway)).toEqual(expect.arrayContaining(['sdk-trace', 'exporter-trace-otlp-http']));
  // Its spans were sent by the time it exited (nothing else traced has run yet).
  expect(servicesSending()).toEqual(['gateway']);
  const service = await serviceRun(true);
  expect(sdkPackagesOf(service)).toEqual(expect.arrayContaining(['sdk-trace', 'exporter-trace-otlp-http']));
  await eventually(() => expect(servicesSending()).toContain('license-service'));
});
