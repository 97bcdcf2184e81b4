import type { Router } from 'express';
import { health } from '@licensing/proto';
import type { EventBus } from '@licensing/runtime';
import type { Clients } from '../clients';
import type { RateLimits } from '../limits';
import { route } from './route';

const SERVING = health.HealthCheckResponse_ServingStatus.SERVING;

export interface ServiceHealth {
  status: 'ok' | 'down';
  latency_ms: number;
}

/** Asks one service's standard gRPC health endpoint, with a short deadline. */
export function checkService(client: health.HealthClient, timeoutMs = 1000): Promise<ServiceHealth> {
  const started = performance.now();
  return new Promise((resolve) => {
    client.check({ service: '' }, { deadline: Date.now() + timeoutMs } as never, (err, res) => {
      const latency_ms = Math.round((performance.now() - started) * 10) / 10;
      resolve({ status: !err && res?.status === SERVING ? 'ok' : 'down', latency_ms });
    });
  });
}

export async function systemStatus(clients: Clients, bus: EventBus, limits: RateLimits, version: string) {
  const names = Object.keys(clients.health) as (keyof Clients['health'])[];
  const results = await Promise.all(names.map((n) => checkService(clients.health[n])));
  const services = Object.fromEntries(names.map((n, i) => [n, results[i]]));
  const dependencies = {
    // A service reports SERVING only while its MongoDB connection is up.
    mongodb: { status: results.every((r) => r.status === 'ok') ? 'ok' : 'degraded' },
    nats: { status: bus.connected ? 'ok' : 'down' },
    // Degraded: each gateway counts on its own until Redis answers again.
    redis: { status: limits.redisStatus },
  };
  const down = results.filter((r) => r.status === 'down').length;
  const status = down === results.length ? 'down' : down > 0 || !bus.connected || limits.redisStatus !== 'ok' ? 'degraded' : 'ok';
  return { status, version, time: new Date().toISOString(), services, dependencies };
}

export function statusRoutes(router: Router, clients: Clients, bus: EventBus, limits: RateLimits, version: string): void {
  route(router, '/status', {
    get: async (_req, res) => {
      res.json(await systemStatus(clients, bus, limits, version));
    },
  });
}
