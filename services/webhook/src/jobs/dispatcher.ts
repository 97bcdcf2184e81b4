import {
  PeriodicTask,
  endSpan,
  newEvent,
  remoteContext,
  SpanKind,
  traceparentOf,
  type Clock,
  type Keyring,
  type Logger,
  type Metrics,
  type Outbox,
  type Tracing,
} from '@licensing/runtime';
import { liveSecrets } from '../domain/endpoint';
import { failingTooLong, nextStep, signedHeaders } from '../domain/delivery';
import type { EndpointDoc } from '../store/models';
import type { UrlPolicy } from '../domain/ssrf';
import type { DeliveryDoc, DeliveryStore } from '../store/deliveries';
import type { EndpointCache } from '../store/endpoint-cache';
import type { EndpointStore } from '../store/queries';
import type { LeaseStore } from '../store/endpoint-leases';
import { EndpointLeases, LEASE_MARGIN_MS, leaseMsFor, type HeldLease } from './endpoint-lease';
import { ResultRecorder } from './result-recorder';
import { send } from './sender';

export interface DispatchSettings {
  /** How often the store is looked at for due deliveries that were not handed over (WEBHOOK_DISPATCH_INTERVAL_MS). */
  intervalMs: number;
  timeoutMs: number;
  scheduleS: number[];
  policy: UrlPolicy;
  secretKey: Keyring;
  /** Finished deliveries are kept this many days. */
  retentionDays: number;
  /** Requests to one endpoint in flight at once (WEBHOOK_ENDPOINT_CONCURRENCY). */
  concurrency: number;
}

/** A delivery waiting in memory to be sent. */
interface Queued {
  d: DeliveryDoc;
  /** Handed over just after it was recorded (not found by the poll): it may need no second look (trusted()). */
  fresh: boolean;
}

/** One endpoint's deliveries in memory, and its chain's state. */
interface Lane {
  queue: Queued[];
  inFlight: number;
  /** Set while a chain runs: a delivery that joins the queue starts at once if there is room. */
  wake?: () => void;
}

/** Deliveries held in memory at most; beyond, they wait in the store for the poll. */
const MAX_QUEUED = 10_000;
/**
 * A fresh delivery is sent as handed over only this soon after it was recorded; one that waited longer
 * (behind a slow endpoint) is read again first. An erasure through this replica marks what waits here
 * (bodyChanged); one through another replica reaches a delivery already handed over only if it waited
 * longer than this. Long enough that a burst sent a little behind its issuance is not read twice.
 */
const FRESH_MS = 30_000;
/** Due deliveries one poll takes at most. */
const POLL_LIMIT = 200;

/**
 * Sends deliveries. The fan-out hands every delivery it records straight to
 * offer(), which sends it at once; the poll of the store (every
 * WEBHOOK_DISPATCH_INTERVAL_MS) is the safety net: retries that came due,
 * deliveries left by a restart or a crash, and those another replica recorded
 * for an endpoint this one holds. The schedule lives in the store
 * (next_attempt_at), so a restart loses nothing.
 *
 * Each endpoint has a chain of its own, with up to `concurrency` requests in
 * flight (no order among them is promised: retries reorder anyway), so a slow
 * or dead endpoint delays only itself. With several instances, an endpoint's
 * deliveries are sent only by the instance holding its lease
 * (endpoint-lease.ts), which also bounds its requests in flight across them.
 */
export class Dispatcher {
  /** licensing_webhook_deliveries_total by outcome: delivered, retry, failed, gone, dropped (endpoint disabled or deleted). */
  private readonly outcomes;
  private readonly leases: EndpointLeases;
  /** Endpoints whose lease another instance holds, until when: their deliveries are left to it till then. */
  private readonly elsewhere = new Map<string, Date>();
  /** The leases this instance holds, kept between chains (released by stop()). */
  private readonly held = new Map<string, HeldLease>();
  private readonly lanes = new Map<string, Lane>();
  /** Deliveries queued or in flight here, by id: each is in one lane once. */
  private readonly known = new Map<string, Queued>();
  /** Deliveries this instance finished lately (epoch ms): one handed over again is not trusted as fresh. */
  private readonly finished = new Map<string, number>();
  /** Endpoints with a chain in flight, and the chains (stop() waits for them). */
  private readonly busy = new Map<string, Promise<void>>();
  private stopping = false;

  constructor(
    private readonly deliveries: DeliveryStore,
    private readonly endpoints: EndpointStore,
    private readonly cache: Pick<EndpointCache, 'enabled'>,
    leaseStore: LeaseStore,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly settings: DispatchSettings,
    private readonly outbox: Outbox,
    metrics: Metrics,
    /** When on: each attempt of a traced delivery is a client span, and the request carries its `traceparent`. */
    private readonly tracing?: Tracing,
  ) {
    this.outcomes = metrics.counter('licensing_webhook_deliveries_total', ['outcome']);
    metrics.gauge('licensing_webhook_queued', async () => this.known.size);
    this.leases = new EndpointLeases(leaseStore, clock, log, leaseMsFor(settings.timeoutMs));
  }

  /**
   * Deliveries just recorded (by the fan-out, or a test event): sent at once, without waiting for the
   * poll. Those whose endpoint another instance holds are left to it (it finds them in the store).
   */
  offer(deliveries: DeliveryDoc[]): void {
    if (this.stopping) return;
    const now = this.clock.now();
    const touched = new Set<string>();
    for (const d of deliveries) {
      if (this.known.has(d._id) || this.finished.has(d._id)) continue;
      if (this.known.size >= MAX_QUEUED) break;
      const until = this.elsewhere.get(d.endpoint_id);
      if (until && until > now) continue;
      this.enqueue(d, true);
      touched.add(d.endpoint_id);
    }
    for (const endpointId of touched) this.kick(endpointId);
  }

  /** A delivery's body was changed in the store (an erasure): if it waits here, it is read again before it goes. */
  bodyChanged(deliveryId: string): void {
    const queued = this.known.get(deliveryId);
    if (queued) queued.fresh = false;
  }

  private enqueue(d: DeliveryDoc, fresh: boolean): void {
    const lane = this.lanes.get(d.endpoint_id) ?? { queue: [], inFlight: 0 };
    this.lanes.set(d.endpoint_id, lane);
    const queued = { d, fresh };
    lane.queue.push(queued);
    this.known.set(d._id, queued);
    lane.wake?.();
  }

  private dropQueue(endpointId: string): void {
    const lane = this.lanes.get(endpointId);
    if (!lane) return;
    for (const q of lane.queue.splice(0)) this.known.delete(q.d._id);
    if (!lane.inFlight) this.lanes.delete(endpointId);
  }

  /**
   * The safety net: due deliveries from the store, oldest first. Endpoints with deliveries already
   * queued here, or held by another instance, are left out of the query, so a long queue cannot crowd
   * out the others (what they have in the store beyond is found once their queue is sent).
   */
  async pass(): Promise<number> {
    if (this.stopping) return 0;
    const now = this.clock.now();
    for (const [endpointId, until] of this.elsewhere) if (until <= now) this.elsewhere.delete(endpointId);
    for (const [endpointId, lease] of this.held)
      if (!this.busy.has(endpointId) && lease.over(now)) this.held.delete(endpointId);
    const forgetBefore = Date.now() - 2 * FRESH_MS;
    for (const [id, at] of this.finished) {
      if (at >= forgetBefore) break; // in the order they finished
      this.finished.delete(id);
    }
    const queued = [...this.lanes].filter(([, lane]) => lane.queue.length).map(([id]) => id);
    const due = await this.deliveries.due(now, POLL_LIMIT, [...queued, ...this.elsewhere.keys()]);
    const touched = new Set<string>();
    let added = 0;
    for (const d of due) {
      if (this.known.has(d._id) || this.known.size >= MAX_QUEUED) continue;
      this.enqueue(d, false);
      touched.add(d.endpoint_id);
      added++;
    }
    for (const endpointId of touched) this.kick(endpointId);
    this.more = added === POLL_LIMIT;
    return due.length;
  }

  /** The last poll filled up with new work: the next one comes at once rather than one interval later. */
  private more = false;

  /** Starts the endpoint's chain unless it runs (a running chain takes what joins its queue). */
  private kick(endpointId: string): void {
    if (this.busy.has(endpointId) || this.stopping) return;
    const lane = this.lanes.get(endpointId);
    if (!lane?.queue.length) return;
    let completed = false;
    const chain = (async () => {
      const kept = this.held.get(endpointId);
      const lease = kept?.held ? kept : await this.leases.take(endpointId);
      if ('busyUntil' in lease) return void this.elsewhere.set(endpointId, lease.busyUntil);
      this.held.set(endpointId, lease);
      completed = await lease.renewWhile(() => this.drain(endpointId, lane, lease));
      if (!lease.held) this.held.delete(endpointId);
    })()
      .catch((err) =>
        this.log.warn({ err, endpoint: endpointId }, 'webhook delivery chain failed; the deliveries stay due'),
      )
      .finally(() => {
        this.busy.delete(endpointId);
        // What joined the queue after the chain's last look is sent by a new chain; what is left of a chain
        // that stopped (lease lost, or held elsewhere) stays in the store for the holder.
        if (completed && !this.stopping) this.kick(endpointId);
        else this.dropQueue(endpointId);
        if (this.lanes.get(endpointId) === lane && !lane.queue.length && !lane.inFlight) this.lanes.delete(endpointId);
      });
    this.busy.set(endpointId, chain);
  }

  /**
   * Sends the lane's queue, up to `concurrency` at a time, until it is empty (true) or the lease is
   * lost or the dispatcher stops (false).
   */
  private async drain(endpointId: string, lane: Lane, lease: HeldLease): Promise<boolean> {
    const recorder = new ResultRecorder(this.deliveries, lease);
    let lost = false;
    await new Promise<void>((resolve) => {
      let over = false;
      const pump = () => {
        if (over) return; // what joins now is for the next chain (see kick())
        while (!lost && !this.stopping && lane.inFlight < this.settings.concurrency && lane.queue.length) {
          const q = lane.queue.shift()!;
          lane.inFlight++;
          void this.attempt(q, lease, recorder)
            .then((held) => {
              if (!held) lost = true;
            })
            .catch((err) =>
              this.log.warn(
                { err, endpoint: endpointId, delivery: q.d._id },
                'webhook delivery attempt failed; the delivery stays due',
              ),
            )
            .finally(() => {
              lane.inFlight--;
              this.known.delete(q.d._id);
              this.finished.delete(q.d._id); // re-inserted last: the map stays in the order they finished
              this.finished.set(q.d._id, Date.now());
              // Bounded also when the poll (which forgets the old ones) runs rarely.
              if (this.finished.size > 2 * MAX_QUEUED) this.finished.delete(this.finished.keys().next().value!);
              pump();
            });
        }
        if (!lane.inFlight && (lost || this.stopping || !lane.queue.length)) {
          over = true;
          lane.wake = undefined;
          resolve();
        }
      };
      lane.wake = pump;
      pump();
    });
    return !lost && !this.stopping;
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
   * Whether a delivery may be sent as it was handed over, without reading it again: it was handed
   * over by whoever recorded it, lately, and recorded after this instance took the endpoint (so no
   * other instance can have sent it, and this one has not: it is in one lane once).
   */
  private trusted(q: Queued, lease: HeldLease, now: Date): boolean {
    const recorded = q.d.created_at.getTime();
    return q.fresh && lease.since.getTime() <= recorded && now.getTime() - recorded <= FRESH_MS;
  }

  /** The endpoint if it is enabled: from the cache, or, when the cache does not have it enabled, from the store. */
  private async endpointOf(d: DeliveryDoc): Promise<EndpointDoc | null> {
    const cached = await this.cache.enabled(d.account_id, d.endpoint_id);
    if (cached) return cached;
    // The cache may not know yet of an endpoint enabled through another replica: a drop is final, so ask.
    const stored = await this.endpoints.byId(d.endpoint_id);
    return stored?.enabled ? stored : null;
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

  /** Sends one attempt, as a client span of the event's trace when tracing is on and the event carries one. */
  private async sendTraced(
    url: string,
    d: DeliveryDoc,
    headers: Record<string, string>,
  ): Promise<Awaited<ReturnType<typeof send>>> {
    const parent = this.tracing && remoteContext(d.traceparent);
    const traced = parent
      ? this.tracing!.start('POST', SpanKind.CLIENT, parent, {
          'http.request.method': 'POST',
          // The host only: a vendor's URL may carry a token in its path or query.
          'server.address': new URL(url).hostname,
          'licensing.webhook.delivery_id': d._id,
          'licensing.webhook.attempt': d.attempts + 1,
        })
      : undefined;
    // The receiver may continue the trace: the W3C header of this attempt's span.
    if (traced) headers.traceparent = traceparentOf(traced.context)!;
    const result = await send(url, headers, d.body, this.settings.timeoutMs, this.settings.policy);
    if (traced)
      endSpan(
        traced.span,
        result.error ?? (result.statusCode !== null && result.statusCode >= 300 ? `HTTP ${result.statusCode}` : false),
        result.statusCode === null ? undefined : { 'http.response.status_code': result.statusCode },
      );
    return result;
  }

  /** One attempt of a delivery under the endpoint's lease; false if the lease is lost (the chain stops, and what is left stays due). */
  private async attempt(q: Queued, lease: HeldLease, recorder: ResultRecorder): Promise<boolean> {
    // Room for the whole request and the record after it, or the lease is renewed first.
    if (!(await lease.holds(this.settings.timeoutMs + LEASE_MARGIN_MS))) return false;
    const now = this.clock.now();
    let d = q.d;
    if (!this.trusted(q, lease, now)) {
      // Read again under the lease: since it was listed, another instance may have sent it.
      const stored = await this.deliveries.find(d.endpoint_id, d._id);
      if (stored?.status !== 'pending' || !stored.next_attempt_at || stored.next_attempt_at > now) return true;
      d = stored;
    }
    const endpoint = await this.endpointOf(d);
    if (!endpoint) {
      const dropped = {
        status: 'failed' as const,
        next_attempt_at: null,
        last_error: 'the endpoint was disabled or deleted',
      };
      if (!(await recorder.record(d._id, dropped))) return false;
      this.outcomes.inc({ outcome: 'dropped' });
      return true;
    }
    const secrets = liveSecrets(endpoint.secrets, now).map((s) => this.settings.secretKey.open(s.sealed).toString());
    const headers = signedHeaders(secrets, d.event_id, Math.floor(now.getTime() / 1000), d.body);
    const result = await this.sendTraced(endpoint.url, d, headers);
    const attempts = d.attempts + 1;
    const after = this.clock.now();
    const common = {
      attempts,
      last_status_code: result.statusCode,
      last_error: result.error,
      last_latency_ms: result.latencyMs,
    };
    const step = nextStep(result.statusCode, attempts, after, this.settings.scheduleS);
    const changes: Partial<DeliveryDoc> =
      step.kind === 'delivered'
        ? { ...common, status: 'delivered', next_attempt_at: null, delivered_at: after }
        : step.kind === 'retry'
          ? { ...common, next_attempt_at: step.at }
          : { ...common, status: 'failed', next_attempt_at: null };
    // Fencing: a result is recorded only by the holder of the lease. One that lost it (it stalled
    // past its end and another instance took over) leaves the delivery due: it may arrive twice,
    // which receivers handle by its webhook-id, but its record is never written by two instances.
    if (!(await recorder.record(d._id, changes))) {
      this.log.warn({ endpoint: d.endpoint_id, delivery: d._id }, 'webhook lease lost during an attempt; not recorded');
      return false;
    }
    this.outcomes.inc({ outcome: step.kind });
    if (step.kind === 'delivered') {
      if (endpoint.failing_since)
        await this.endpoints.update(endpoint.account_id, endpoint._id, { failing_since: null });
    } else if (step.kind === 'gone') {
      // 410 Gone: the receiver says it will never want these again.
      await this.disable(endpoint, 'the endpoint answered 410 Gone');
    } else if (!endpoint.failing_since) {
      // Every attempt here failed: five days of only failures disable the endpoint.
      await this.endpoints.update(endpoint.account_id, endpoint._id, { failing_since: after });
    } else if (failingTooLong(endpoint.failing_since, after)) {
      // The cached endpoint may be a moment old: a success elsewhere may have ended the failing spell.
      const stored = await this.endpoints.byId(endpoint._id);
      if (stored?.failing_since && failingTooLong(stored.failing_since, after))
        await this.disable(stored, 'every delivery failed for 5 days');
    }
    return true;
  }

  private task?: PeriodicTask;
  private pruning?: PeriodicTask;

  start(): void {
    // Made here, not as a field: parameter properties are not set yet when fields initialise.
    this.task = new PeriodicTask(
      'webhook dispatch',
      () => this.pass(),
      () => (this.more ? 0 : this.settings.intervalMs),
      this.log,
    );
    this.task.start();
    this.pruning = new PeriodicTask('webhook delivery retention', () => this.prune(), 3_600_000, this.log);
    this.pruning.start();
  }

  /** Stops taking deliveries, waits for the requests in flight and their records, and releases the leases. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.task?.stop();
    await this.pruning?.stop();
    await this.idle();
    // Another instance may take these endpoints at once rather than when the leases run out.
    await Promise.all([...this.held.values()].map((l) => l.release()));
    this.held.clear();
  }
}
