import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { createLogger, EventBus, loadConfig, runMain } from '@licensing/runtime';
import { createApp } from './app';
import { createClients } from './clients';
import { gatewaySchema, type GatewayConfig } from './config';

const VERSION = process.env.npm_package_version ?? '0.1.0';

export interface RunningGateway {
  port: number;
  url: string;
  stop(): Promise<void>;
}

export async function start(opts: { config?: Partial<GatewayConfig>; env?: Record<string, string | undefined> } = {}): Promise<RunningGateway> {
  const config = loadConfig(gatewaySchema, opts.env ?? process.env, opts.config ?? {});
  const log = createLogger('gateway', config.LOG_LEVEL);
  const bus = await EventBus.connect({ url: config.NATS_URL, subjectPrefix: config.EVENTS_SUBJECT_PREFIX, stream: config.EVENTS_STREAM, name: 'gateway', log });
  const clients = createClients(config);
  const app = createApp({ config, clients, bus, log, version: VERSION });
  const server = createServer({ keepAliveTimeout: 65_000, headersTimeout: 20_000, requestTimeout: 30_000 }, app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`;
  log.info({ url }, 'gateway listening');

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // Stop accepting, let in-flight requests finish (bounded), then close channels.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const limit = new Promise<void>((resolve) => setTimeout(resolve, config.SHUTDOWN_TIMEOUT_MS).unref());
      await Promise.race([closed, limit]);
      server.closeAllConnections();
      clients.close();
      await bus.close();
    })());
  return { port, url, stop };
}

if (require.main === module) runMain('gateway', () => start());
