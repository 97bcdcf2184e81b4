import type { RequestHandler, Router } from 'express';
import { accountLimits, PAYMENTS_HEALTH, mailQuotaOf, type health, type PaymentsState } from '@licensing/proto';
import { checkHealth } from '@licensing/runtime';
import type { EventFeed } from '../backends/event-feed';
import type { Clients } from '../backends/clients';
import { principalOf, type Principal } from '../auth/principal';
import { limitsFor } from '@licensing/runtime';
import type { RateLimits } from '@licensing/runtime';
import { registerRouteTable, type RouteRow } from './route';

const PROBE_TIMEOUT_MS = 1000;

export interface Probe {
  status: 'ok' | 'degraded' | 'down';
  latency_ms: number | null;
}

const elapsed = (started: number) => Math.round((performance.now() - started) * 10) / 10;

/** Asks one service's standard gRPC health endpoint, with a short deadline. */
export async function checkService(client: health.HealthClient, timeoutMs = PROBE_TIMEOUT_MS): Promise<Probe> {
  const { serving, latencyMs } = await checkHealth(client, timeoutMs);
  return { status: serving ? 'ok' : 'down', latency_ms: latencyMs };
}

/** Redis round trip; 'degraded' (not down) without it: each gateway then counts limits on its own. */
export async function checkRedis(limits: RateLimits): Promise<Probe> {
  if (limits.redisStatus !== 'ok') return { status: 'degraded', latency_ms: null };
  const started = performance.now();
  try {
    await limits.redis.ping();
    return { status: 'ok', latency_ms: elapsed(started) };
  } catch {
    return { status: 'degraded', latency_ms: null };
  }
}

/** NATS round trip; while it is down services keep events in their outboxes. */
export async function checkNats(bus: EventFeed): Promise<Probe> {
  if (!bus.connected) return { status: 'down', latency_ms: null };
  try {
    const rtt = await Promise.race([
      bus.rtt(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), PROBE_TIMEOUT_MS).unref()),
    ]);
    return { status: 'ok', latency_ms: Math.round(rtt * 10) / 10 };
  } catch {
    return { status: 'down', latency_ms: null };
  }
}

/**
 * Everything behind the gateway. `down` when no service answers; `degraded`
 * when some part is missing but requests can still be served in part (a
 * service, NATS: events wait in outboxes, Redis: per-gateway limits).
 */
export async function systemStatus(clients: Clients, bus: EventFeed, limits: RateLimits, version: string) {
  const names = Object.keys(clients.health) as (keyof Clients['health'])[];
  const [results, redis, nats, payments] = await Promise.all([
    Promise.all(names.map((n) => checkService(clients.health[n]))),
    checkRedis(limits),
    checkNats(bus),
    checkPayments(clients),
  ]);
  const services = Object.fromEntries(names.map((n, i) => [n, results[i]]));
  const up = results.filter((r) => r.status === 'ok');
  // Services report SERVING only while their MongoDB connection is up, so the
  // slowest SERVING answer bounds the store's round trip as seen from here.
  const mongodb: Probe = {
    status: up.length === results.length ? 'ok' : up.length ? 'degraded' : 'down',
    latency_ms: up.length ? Math.max(...up.map((r) => r.latency_ms ?? 0)) : null,
  };
  const dependencies = { mongodb, nats, redis };
  const status =
    up.length === 0
      ? 'down'
      : up.length < results.length || nats.status !== 'ok' || redis.status !== 'ok'
        ? 'degraded'
        : 'ok';
  return { status, version, time: new Date().toISOString(), services, dependencies, payments };
}

/** Whether checkout can take payments: "not configured" while Stripe is chosen without its keys; "unknown" when checkout does not answer. */
async function checkPayments(clients: Clients): Promise<PaymentsState> {
  const [service, payments] = await Promise.all([
    checkHealth(clients.health.checkout, PROBE_TIMEOUT_MS),
    checkHealth(clients.health.checkout, PROBE_TIMEOUT_MS, PAYMENTS_HEALTH),
  ]);
  if (!service.serving) return 'unknown';
  return payments.serving ? 'configured' : 'not configured';
}

/** How long one probe of /readyz's backends answers every /readyz: at most one probe per second. */
export const READINESS_MEMO_MS = 1000;
/** How long /readyz waits for that probe before it answers without it (Readiness.answered()). */
export const READINESS_WAIT_MS = 250;

/**
 * /readyz: this process can serve, so it is ready unless it is shutting down. A backend's outage is no
 * reason to take every gateway out of the load balancer at once: with the account service down, a
 * gateway still answers the validations it holds in memory, and every other call gets a clear 503
 * from it, as /api/v1/status reports. The body says what the backends look like (informational);
 * /readyz is public, so they are probed at most once per READINESS_MEMO_MS, whoever asks and however
 * often: callers within that time (concurrent ones included) share one probe and its answer. Draining
 * shows at once (it is this process's own state).
 */
export class Readiness {
  private last: { atMs: number; probes: Promise<[Probe, Probe]> } | undefined;

  constructor(
    private readonly clients: Clients,
    private readonly limits: RateLimits,
    private readonly nowMs: () => number = () => performance.now(),
    private readonly memoMs = READINESS_MEMO_MS,
    private readonly waitMs = READINESS_WAIT_MS,
  ) {}

  async check(draining = false) {
    const [account, redis] = await this.answered();
    const ready = !draining;
    return {
      ready,
      body: {
        status: ready ? 'ready' : 'shutting_down',
        account_service: account,
        rate_limits: redis.status === 'ok' ? 'redis' : 'in_memory_fallback',
      },
    };
  }

  /**
   * The probes if they answer within waitMs; else the account service is reported down (it did not
   * answer in time) and Redis by what the limiter knows. A hung backend must not hold /readyz up: the
   * kubelet gives a probe one second by default, and every gateway would time out together.
   */
  private async answered(): Promise<[Probe, Probe]> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(resolve, this.waitMs, undefined);
    });
    const got = await Promise.race([this.probes(), late]);
    clearTimeout(timer);
    return (
      got ?? [
        { status: 'down', latency_ms: null },
        { status: this.limits.redisStatus === 'ok' ? 'ok' : 'degraded', latency_ms: null },
      ]
    );
  }

  private probes(): Promise<[Probe, Probe]> {
    const now = this.nowMs();
    if (this.last && now - this.last.atMs < this.memoMs) return this.last.probes;
    // Neither probe throws (an unreachable backend is a status), so a kept promise never holds an error.
    const probes = Promise.all([checkService(this.clients.health.account), checkRedis(this.limits)]);
    this.last = { atMs: now, probes };
    return probes;
  }
}

/**
 * The caller's budgets, so a client can see them without reading headers: the account's hourly
 * quota (full-scope keys), the hourly allowance of app traffic (validate-scope keys, licence
 * credentials), the per-key minute limit, operator overrides included, the per-licence one, an app
 * credential's own minute, a heartbeat's per-activation minute and the per-address budget of requests
 * naming unknown or revoked licences (rate-limits/budgets.ts), and the
 * account's mail quota (per clock hour and per UTC day, by plan).
 */
export function rateLimitsOf(p: Principal, licensePerMinute?: number) {
  const limits = limitsFor(p, licensePerMinute);
  return {
    plan: p.plan,
    hourly_quota: limits.hour,
    hourly_app_allowance: limits.appHour,
    per_key_per_minute: limits.minute,
    per_license_per_minute: limits.licenseMinute,
    // The account's customer mail (the notification service defers mail past these, never drops it).
    mail_per_hour: mailQuotaOf(p.plan).perHour,
    mail_per_day: mailQuotaOf(p.plan).perDay,
    per_validate_key_per_minute: limits.validateKeyMinute,
    heartbeats_per_activation_per_minute: limits.heartbeatMinute,
    unknown_per_credential_address_per_minute: limits.unknownMinute,
  };
}

interface StatusDeps {
  clients: Clients;
  bus: EventFeed;
  limits: RateLimits;
  version: string;
}

/** GET /status: everything behind the gateway, and the caller's budgets. */
function getStatus({ clients, bus, limits, version }: StatusDeps): RequestHandler {
  return async (_req, res) => {
    res.json({
      ...(await systemStatus(clients, bus, limits, version)),
      rate_limits: rateLimitsOf(principalOf(res), limits.settings.licensePerMinute),
      account_limits: accountLimits,
    });
  };
}

/** The system's status, as the caller sees it. */
export const statusRouteTable: readonly RouteRow<StatusDeps>[] = [
  { method: 'get', path: '/status', role: 'read_only', handler: getStatus },
];

export function statusRoutes(
  router: Router,
  clients: Clients,
  bus: EventFeed,
  limits: RateLimits,
  version: string,
): void {
  registerRouteTable(router, statusRouteTable, { clients, bus, limits, version });
}
