import { PeriodicTask, newEvent, unseal, type Clock, type Logger, type Metrics, type Outbox } from '@licensing/runtime';
import { liveSecrets } from '../domain/endpoint';
import { failingTooLong, nextStep, signedHeaders } from '../domain/delivery';
import type { EndpointDoc } from '../store/models';
import type { UrlPolicy } from '../domain/ssrf';
import type { DeliveryDoc, DeliveryStore } from '../store/deliveries';
import type { EndpointStore } from '../store/queries';
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
 * nothing; an attempt takes a lease first so another instance waits for it.
 */
export class Dispatcher {
  /** licensing_webhook_deliveries_total by outcome: delivered, retry, failed, gone, dropped (endpoint disabled or deleted). */
  private readonly outcomes;

  constructor(
    private readonly deliveries: DeliveryStore,
    private readonly endpoints: EndpointStore,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly settings: DispatchSettings,
    private readonly outbox: Outbox,
    metrics: Metrics,
  ) {
    this.outcomes = metrics.counter('licensing_webhook_deliveries_total', ['outcome']);
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
   * never another's by more than one timeout. Endpoints with a chain in flight
   * are left out of the query, so they cannot crowd out the others either.
   */
  async pass(): Promise<number> {
    const due = await this.deliveries.due(this.clock.now(), 200, [...this.busy.keys()]);
    const byEndpoint = new Map<string, DeliveryDoc[]>();
    for (const d of due) byEndpoint.set(d.endpoint_id, [...(byEndpoint.get(d.endpoint_id) ?? []), d]);
    for (const [endpointId, list] of byEndpoint) {
      if (this.busy.has(endpointId)) continue;
      const chain = (async () => {
        for (const d of list) await this.attempt(d);
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

  private async attempt(d: DeliveryDoc): Promise<void> {
    const endpoint = await this.endpoints.byId(d.endpoint_id);
    if (!endpoint?.enabled) {
      await this.deliveries.update(d._id, {
        status: 'failed',
        next_attempt_at: null,
        last_error: 'the endpoint was disabled or deleted',
      });
      this.outcomes.inc({ outcome: 'dropped' });
      return;
    }
    const now = this.clock.now();
    // Lease: no other pass or instance picks this delivery while it is in flight.
    await this.deliveries.update(d._id, { next_attempt_at: new Date(now.getTime() + this.settings.timeoutMs + 5000) });
    const secrets = liveSecrets(endpoint.secrets, now).map((s) => unseal(s.sealed, this.settings.secretKey).toString());
    const headers = signedHeaders(secrets, d.event_id, Math.floor(now.getTime() / 1000), d.body);
    const result = await send(endpoint.url, headers, d.body, this.settings.timeoutMs, this.settings.policy);
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
        return;
      case 'gone':
        // 410 Gone: the receiver says it will never want these again.
        await this.deliveries.update(d._id, { ...common, status: 'failed', next_attempt_at: null });
        await this.disable(endpoint, 'the endpoint answered 410 Gone');
        return;
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
  }
}
