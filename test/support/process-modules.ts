import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitForPort } from '../../scripts/lib/net';
import { spawnComponent } from '../../scripts/lib/launch';
import type { Component } from '../../scripts/lib/components';

// A component's process from its dist entry (as deployments run it), preloaded with loaded-modules.cjs,
// which writes the modules it loaded at exit: for tests of what a process loads (tracing off costs
// nothing). Used by the gateway's and a service's component tests alike.

/** The OpenTelemetry SDK and its exporters (not @opentelemetry/api, whose no-op the code holds). */
const SDK = /\/node_modules\/@opentelemetry\/(sdk-[^/]+|exporter-[^/]+|otlp-[^/]+|resources)\//;

/** The SDK packages among `modules`, sorted. */
export const sdkPackagesOf = (modules: string[]): string[] =>
  [...new Set(modules.map((m) => SDK.exec(m)?.[1]).filter((p): p is string => p !== undefined))].sort();

/** Tracing's settings: none (off, even if this shell has some), or `on` (a receiver's OTEL_* variables). */
export const otelOf = (on: Record<string, string> | false): Record<string, string> =>
  on || { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' };

export interface RecordedProcess {
  port: number;
  /** SIGTERM, then its exit code and the modules it loaded. */
  stop(): Promise<{ code: number | null; modules: string[] }>;
}

export class ModuleRecorder {
  private readonly dir = mkdtempSync(join(tmpdir(), 'licensing-modules-'));
  private readonly children: ChildProcess[] = [];
  private runs = 0;

  /** Starts `name` from dist on a free port with `env(port)`, recording the modules it loads. */
  async start(name: Component, env: (port: number) => Record<string, string>): Promise<RecordedProcess> {
    const run = ++this.runs;
    const file = join(this.dir, `modules-${run}.json`);
    const port = await freePort();
    const preload = join(__dirname, 'loaded-modules.cjs');
    const { child, exited } = spawnComponent(
      name,
      { ...env(port), NODE_OPTIONS: `--require ${preload}`, LOADED_MODULES_FILE: file },
      join(this.dir, `${name}-${run}.log`),
    );
    this.children.push(child);
    await Promise.race([waitForPort('127.0.0.1', port, 30_000), exited]);
    return {
      port,
      async stop() {
        const gone = once(child, 'exit') as Promise<[number | null]>;
        child.kill('SIGTERM');
        const [code] = await gone;
        if (!existsSync(file)) throw new Error(`the process wrote no ${file}: did it exit gracefully?`);
        return { code, modules: JSON.parse(readFileSync(file, 'utf8')) as string[] };
      },
    };
  }

  /** Kills what a failed test left running, and removes the files. */
  close(): void {
    for (const c of this.children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}
