import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock, Logger } from '@licensing/runtime';
import { leaseId, type LeaseStore } from '../store/endpoint-leases';

// Several webhook service instances (the manifests run two) read the same due
// deliveries. Before sending to an endpoint an instance takes the endpoint's
// lease, so one instance at a time sends to it: each delivery goes out once, and
// the endpoint gets at most WEBHOOK_ENDPOINT_CONCURRENCY requests at a time.
//
// The lease is a document per (endpoint, epoch) in the store, taken by a unique
// insert (store/endpoint-leases.ts says why that is atomic on FerretDB 1.x, whose
// updates are not, and on MongoDB). Chosen over a Redis SET NX or a NATS KV
// create because the webhook service has neither: it has no Redis connection or
// user, and its NATS user may only read its one durable consumer.
//
// - It lasts leaseMsFor(timeout) (twice the request timeout plus 5 s) from when it
//   was taken or last renewed, so if its holder dies another instance takes over
//   after that. A holder that stops releases its leases at once.
// - While its holder sends, it renews every third of that: a renewal is the
//   insert of the next epoch, which fails if another instance made it first.
//   Between chains the holder keeps it without renewing, so a busy endpoint's
//   next chain starts without a store call, and an idle one's lease runs out.
// - Fencing: the holder sends only if its lease has the whole request timeout
//   plus a margin to run, and records a result only if it still holds the lease
//   with the margin to spare; otherwise it renews first, and if that fails it
//   stops without recording (the delivery stays due and is sent again: receivers
//   deduplicate on webhook-id). The margin is what the instances' clocks may
//   disagree by, and how long one store write may take.

/** How much time a holder keeps in hand: its clock may differ from another instance's by up to this. */
export const LEASE_MARGIN_MS = 2000;

/** A lease outlives a whole attempt (one request timeout) with room for a renewal that fails once. */
export const leaseMsFor = (timeoutMs: number) => 2 * timeoutMs + 5000;

/**
 * The lease of one endpoint held by this instance. It is kept between chains
 * (a chain that finds it still held, or renews it, needs no store call to start),
 * renewed only while a chain runs, and released when the dispatcher stops; one
 * left unused runs out on its own.
 */
export class HeldLease {
  private renewing?: Promise<void>;
  private lost = false;

  constructor(
    private readonly leases: EndpointLeases,
    readonly endpointId: string,
    private epoch: number,
    /** When this epoch ends (as written in the store). */
    private until: Date,
    /**
     * When this instance took the endpoint (renewals keep it): no other instance has sent anything
     * to it that was recorded since then, so a delivery recorded after this needs no second look.
     */
    readonly since: Date,
  ) {}

  /** False once another instance took the endpoint, or this one released it. */
  get held(): boolean {
    return !this.lost;
  }

  /** Whether it ran out (or is gone) at `now`: an unused lease past this is forgotten. */
  over(now: Date): boolean {
    return this.lost || this.until.getTime() <= now.getTime();
  }

  /** Runs `work`, renewing the lease every third of its length meanwhile. */
  async renewWhile<T>(work: () => Promise<T>): Promise<T> {
    const timer = setInterval(() => void this.renew(), Math.floor(this.leases.leaseMs / 3));
    timer.unref();
    try {
      return await work();
    } finally {
      clearInterval(timer);
    }
  }

  /** True if this instance still holds the endpoint for at least `forMs`, renewing first if it must. */
  async holds(forMs: number): Promise<boolean> {
    if (this.lost) return false;
    if (this.until.getTime() - this.leases.clock.now().getTime() >= forMs) return true;
    await this.renew();
    return !this.lost && this.until.getTime() - this.leases.clock.now().getTime() >= forMs;
  }

  /** One renewal at a time; a failed store call keeps the current epoch (it runs out on its own). */
  private renew(): Promise<void> {
    if (this.lost) return Promise.resolve();
    this.renewing ??= this.leases
      .extend(this.endpointId, this.epoch)
      .then((next) => {
        if (next) [this.epoch, this.until] = [next.epoch, next.until];
        else this.lost = true;
      })
      .catch((err) => this.leases.log.warn({ err, endpoint: this.endpointId }, 'could not renew a webhook lease'))
      .finally(() => {
        this.renewing = undefined;
      });
    return this.renewing;
  }

  /** Ends the lease now, so another instance need not wait for it to run out. */
  async release(): Promise<void> {
    await this.renewing;
    if (this.lost) return;
    this.lost = true;
    await this.leases.store
      .release(leaseId(this.endpointId, this.epoch), this.leases.clock.now())
      .catch((err) => this.leases.log.warn({ err, endpoint: this.endpointId }, 'could not release a webhook lease'));
  }
}

/** Takes endpoints' leases for this dispatcher instance. */
export class EndpointLeases {
  /** Who made an epoch, for logs and anyone reading the store; ownership is the epoch itself. */
  readonly holder = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;

  constructor(
    readonly store: LeaseStore,
    readonly clock: Clock,
    readonly log: Logger,
    readonly leaseMs: number,
  ) {}

  /** The endpoint's lease, or when the current holder's ends (until then, there is no point asking again). */
  async take(endpointId: string): Promise<HeldLease | { busyUntil: Date }> {
    const now = this.clock.now();
    const newest = await this.store.newest(endpointId);
    if (newest && newest.expires_at.getTime() > now.getTime()) return { busyUntil: newest.expires_at };
    const next = await this.extend(endpointId, newest?.epoch ?? 0);
    if (!next) return { busyUntil: new Date(now.getTime() + this.leaseMs) }; // another instance just took it
    // `now` is when the previous epoch was seen over: whoever held it sends nothing it listed after that.
    return new HeldLease(this, endpointId, next.epoch, next.until, now);
  }

  /**
   * Makes the epoch after `epoch`, for this instance: null if another instance made it (or a later one)
   * first. Epochs only grow, so once this one is read back as the newest, nobody holds a later one.
   */
  async extend(endpointId: string, epoch: number): Promise<{ epoch: number; until: Date } | null> {
    const next = epoch + 1;
    const until = new Date(this.clock.now().getTime() + this.leaseMs);
    const id = leaseId(endpointId, next);
    const doc = { _id: id, endpoint_id: endpointId, epoch: next, holder: this.holder, expires_at: until };
    if (!(await this.store.claim(doc))) return null;
    // An older epoch may have been inserted again after its removal by an instance that read the
    // newest before `epoch` was made: only the newest counts.
    if ((await this.store.newest(endpointId))?._id !== id) return null;
    await this.store
      .forgetBefore(endpointId, next)
      .catch((err) => this.log.warn({ err, endpoint: endpointId }, 'could not remove old webhook lease epochs'));
    return { epoch: next, until };
  }
}
