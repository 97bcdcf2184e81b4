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
    const event = newEvent('webhook.disabled', endpoint.account_id, { endpoint: { id: endpoint._id, url: endpoint.url }, reason }, this.clock.now());
    if (await this.endpoints.disable(endpoint._id, event)) {
      this.outbox.flush(this.endpoints.Endpoint, endpoint._id);
      this.log.info({ endpoint: endpoint._id, reason }, 'webhook endpoint disabled');
    }
  }

  async pass(): Promise<number> {
    const due = await this.deliveries.due(this.clock.now(), 200);
    const byEndpoint = new Map<string, DeliveryDoc[]>();
    for (const d of due) byEndpoint.set(d.endpoint_id, [...(byEndpoint.get(d.endpoint_id) ?? []), d]);
    await Promise.all([...byEndpoint.values()].map(async (list) => {
      for (const d of list) await this.attempt(d);
    }));
    return due.length;
  }

  private async attempt(d: DeliveryDoc): Promise<void> {
    const endpoint = await this.endpoints.byId(d.endpoint_id);
    if (!endpoint || !endpoint.enabled) {
      await this.deliveries.update(d._id, { status: 'failed', next_attempt_at: null, last_error: 'the endpoint was disabled or deleted' });
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
    const common = { attempts, last_status_code: result.statusCode, last_error: result.error, last_latency_ms: result.latencyMs };
    const step = nextStep(result.statusCode, attempts, after, this.settings.scheduleS);
    this.outcomes.inc({ outcome: step.kind });
    switch (step.kind) {
      case 'delivered':
        await this.deliveries.update(d._id, { ...common, status: 'delivered', next_attempt_at: null, delivered_at: after });
        if (endpoint.failing_since) await this.endpoints.update(endpoint.account_id, endpoint._id, { failing_since: null });
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
    if (!endpoint.failing_since) await this.endpoints.update(endpoint.account_id, endpoint._id, { failing_since: after });
    else if (failingTooLong(endpoint.failing_since, after)) await this.disable(endpoint, 'every delivery failed for 5 days');
  }

  private task?: PeriodicTask;

  start(): void {
    // Made here, not as a field: parameter properties are not set yet when fields initialise.
    this.task = new PeriodicTask('webhook dispatch', () => this.pass(), this.settings.intervalMs, this.log);
    this.task.start();
  }

  async stop(): Promise<void> {
    await this.task?.stop();
  }

}
