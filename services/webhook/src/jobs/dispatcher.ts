import { PeriodicTask, newEvent, unseal, type Clock, type Logger, type Metrics, type Outbox } from '@licensing/runtime';
import { liveSecrets } from '../domain/endpoint';
import { failingTooLong, nextStep, signedHeaders } from '../domain/delivery';
import type { EndpointDoc } from '../store/models';
import type { UrlPolicy } from '../domain/ssrf';
import type { DeliveryDoc, DeliveryStore } from '../store/deliveries';
import type { EndpointStore } from '../store/queries';
import type { LeaseStore } from '../store/endpoint-leases';
import { EndpointLeases, LEASE_MARGIN_MS, leaseMsFor, type HeldLease } from './endpoint-lease';
import { send } from './sender';

export interface DispatchSettings {
  intervalMs: number;
  timeoutMs: number;
  scheduleS: number[];
  policy: UrlPolicy;
  secretKey: Buffer;
  /** Finished deliveries are kept this many days. */
  retentionDays: number;
}

/**
 * Sends due deliveries. Deliveries of one endpoint go one at a time; different
 * endpoints are served in parallel, so a slow or dead endpoint delays only
 * itself. The schedule lives in MongoDB (next_attempt_at), so a restart loses
 * nothing. With several instances, an endpoint's deliveries are sent only by the
 * instance holding its lease (endpoint-lease.ts), which also keeps them one at a
 * time across instances.
 */
export class Dispatcher {
  /** licensing_webhook_deliveries_total by outcome: delivered, retry, failed, gone, dropped (endpoint disabled or deleted). */
  private readonly outcomes;
  private readonly leases: EndpointLeases;
  /** Endpoints whose lease another instance holds, until when: left out of the query till then. */
  private readonly elsewhere = new Map<string, Date>();
  /** The leases this instance holds, kept between chains (released by stop()). */
  private readonly held = new Map<string, HeldLease>();

  constructor(
    private readonly deliveries: DeliveryStore,
    private readonly endpoints: EndpointStore,
    leaseStore: LeaseStore,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly settings: DispatchSettings,
    private readonly outbox: Outbox,
    metrics: Metrics,
  ) {
    this.outcomes = metrics.counter('licensing_webhook_deliveries_total', ['outcome']);
    this.leases = new EndpointLeases(leaseStore, clock, log, leaseMsFor(settings.timeoutMs));
  }

  /** Disables an endpoint once, with webhook.disabled saying why. */
  private async disable(endpoint: EndpointDoc, reason: string): Promise<void> {
    const event = newEvent(
      'webhook.disabled',
      endpoint.account_id,
      { endpoint: { id: endpoint._id, url: endpoint.url }, reason },
      this.clock.now(),
    );
    if (await this.endpoints.disable(endpoint._id, event)) {
      this.outbox.flush(this.endpoints.Endpoint, endpoint._id);
      this.log.info({ endpoint: endpoint._id, reason }, 'webhook endpoint disabled');
    }
  }

  /** Endpoints with a delivery chain in flight, and the chains (stop() waits for them). */
  private readonly busy = new Map<string, Promise<void>>();

  /**
   * Starts sending what is due, one chain per endpoint, and returns without
   * waiting for them: the next pass (one interval later) serves every other
   * endpoint again, so a slow or dead endpoint delays only its own deliveries,
   * never another's by more than one timeout. Endpoints with a chain in flight,
   * here or at another instance, are left out of the query, so they cannot crowd
   * out the others either.
   */
  async pass(): Promise<number> {
    const now = this.clock.now();
    for (const [endpointId, until] of this.elsewhere) if (until <= now) this.elsewhere.delete(endpointId);
    for (const [endpointId, lease] of this.held)
      if (!this.busy.has(endpointId) && lease.over(now)) this.held.delete(endpointId);
    const due = await this.deliveries.due(now, 200, [...this.busy.keys(), ...this.elsewhere.keys()]);
    const byEndpoint = new Map<string, DeliveryDoc[]>();
    for (const d of due) byEndpoint.set(d.endpoint_id, [...(byEndpoint.get(d.endpoint_id) ?? []), d]);
    for (const [endpointId, list] of byEndpoint) {
      if (this.busy.has(endpointId)) continue;
      const chain = (async () => {
        const lease = this.held.get(endpointId) ?? (await this.leases.take(endpointId));
        if ('busyUntil' in lease) return void this.elsewhere.set(endpointId, lease.busyUntil);
        this.held.set(endpointId, lease);
        await lease.renewWhile(async () => {
          for (const d of list) if (!(await this.attempt(d, lease))) break;
        });
        if (!lease.held) this.held.delete(endpointId);
      })()
        .catch((err) =>
          this.log.warn({ err, endpoint: endpointId }, 'webhook delivery chain failed; the deliveries stay due'),
        )
        .finally(() => this.busy.delete(endpointId));
      this.busy.set(endpointId, chain);
    }
    return due.length;
  }

  /** Waits until no delivery is in flight (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.busy.size) await Promise.all([...this.busy.values()]);
  }

  /** Removes finished deliveries older than the retention period. */
  async prune(): Promise<number> {
    return this.deliveries.prune(new Date(this.clock.now().getTime() - this.settings.retentionDays * 86_400_000));
  }

  /**
   * One attempt of a delivery listed before the lease was taken, under that lease;
   * false if the lease is lost (the chain stops, and what is left stays due).
   */
  private async attempt(listed: DeliveryDoc, lease: HeldLease): Promise<boolean> {
    // Room for the whole request and the record after it, or the lease is renewed first.
    if (!(await lease.holds(this.settings.timeoutMs + LEASE_MARGIN_MS))) return false;
    // Read again under the lease: since it was listed, another instance may have sent it.
    const d = await this.deliveries.find(listed.endpoint_id, listed._id);
    const now = this.clock.now();
    if (d?.status !== 'pending' || !d.next_attempt_at || d.next_attempt_at > now) return true;
    const endpoint = await this.endpoints.byId(d.endpoint_id);
    if (!endpoint?.enabled) {
      await this.deliveries.update(d._id, {
        status: 'failed',
        next_attempt_at: null,
        last_error: 'the endpoint was disabled or deleted',
      });
      this.outcomes.inc({ outcome: 'dropped' });
      return true;
    }
    const secrets = liveSecrets(endpoint.secrets, now).map((s) => unseal(s.sealed, this.settings.secretKey).toString());
    const headers = signedHeaders(secrets, d.event_id, Math.floor(now.getTime() / 1000), d.body);
    const result = await send(endpoint.url, headers, d.body, this.settings.timeoutMs, this.settings.policy);
    // Fencing: a result is recorded only by the holder of the lease. One that lost it (it stalled
    // past its end and another instance took over) leaves the delivery due: it may arrive twice,
    // which receivers handle by its webhook-id, but its record is never written by two instances.
    if (!(await lease.holds(LEASE_MARGIN_MS))) {
      this.log.warn({ endpoint: d.endpoint_id, delivery: d._id }, 'webhook lease lost during an attempt; not recorded');
      return false;
    }
    const attempts = d.attempts + 1;
    const after = this.clock.now();
    const common = {
      attempts,
      last_status_code: result.statusCode,
      last_error: result.error,
      last_latency_ms: result.latencyMs,
    };
    const step = nextStep(result.statusCode, attempts, after, this.settings.scheduleS);
    this.outcomes.inc({ outcome: step.kind });
    switch (step.kind) {
      case 'delivered':
        await this.deliveries.update(d._id, {
          ...common,
          status: 'delivered',
          next_attempt_at: null,
          delivered_at: after,
        });
        if (endpoint.failing_since)
          await this.endpoints.update(endpoint.account_id, endpoint._id, { failing_since: null });
        return true;
      case 'gone':
        // 410 Gone: the receiver says it will never want these again.
        await this.deliveries.update(d._id, { ...common, status: 'failed', next_attempt_at: null });
        await this.disable(endpoint, 'the endpoint answered 410 Gone');
        return true;
      case 'retry':
        await this.deliveries.update(d._id, { ...common, next_attempt_at: step.at });
        break;
      case 'failed':
        await this.deliveries.update(d._id, { ...common, status: 'failed', next_attempt_at: null });
        break;
    }
    // Every attempt here failed: five days of only failures disable the endpoint.
    if (!endpoint.failing_since)
      await this.endpoints.update(endpoint.account_id, endpoint._id, { failing_since: after });
    else if (failingTooLong(endpoint.failing_since, after))
      await this.disable(endpoint, 'every delivery failed for 5 days');
    return true;
  }

  private task?: PeriodicTask;
  private pruning?: PeriodicTask;

  start(): void {
    // Made here, not as a field: parameter properties are not set yet when fields initialise.
    this.task = new PeriodicTask('webhook dispatch', () => this.pass(), this.settings.intervalMs, this.log);
    this.task.start();
    this.pruning = new PeriodicTask('webhook delivery retention', () => this.prune(), 3_600_000, this.log);
    this.pruning.start();
  }

  async stop(): Promise<void> {
    await this.task?.stop();
    await this.pruning?.stop();
    await this.idle();
    // Another instance may take these endpoints at once rather than when the leases run out.
    await Promise.all([...this.held.values()].map((l) => l.release()));
    this.held.clear();
  }
}
