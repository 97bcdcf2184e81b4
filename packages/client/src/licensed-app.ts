// The app's side of licensing with the licence key alone (no API key ships in
// the app): activate this machine, validate with its fingerprint, keep a
// floating seat alive by heartbeating at a third of its lease, release it on
// stop, and fall back to a signed licence file when the server is out of reach.
// Every request carries `Authorization: License <licence key>`.
import { describe } from './arguments';
import { DEFAULTS, checkBaseUrl, positiveNumber, wholeNumber } from './client';
import { LicensingError } from './errors';
import { Transport } from './http';
import {
  verifyLicenseFile,
  type LicenseFileFailure,
  type LicenseFilePayload,
  type VerifyLicenseFileOptions,
} from './license-file';
import { Licenses, codeList } from './resources/licenses';
import { Updates, type UpdateCheckOptions } from './resources/updates';
import type { Activation, KeyValidation, LicenseFile, SeatRescue } from './types';
import type { UpdateCheck } from './update-types';

export interface LicensedAppOptions {
  /** Where the gateway answers, e.g. https://licensing.example.com. */
  baseUrl: string;
  /** The customer's licence key: the app's only credential (`Authorization: License …`). */
  licenseKey: string;
  /** A stable, non-identifying id of this machine (e.g. a hash of a hardware id); at most 200 characters. */
  fingerprint: string;
  /** A name for this machine in the licence's activation list (optional, at most 100 characters). */
  name?: string;
  /** Refuse a key of another product: validation answers `product_mismatch`. Needed by checkForUpdate(). */
  productId?: string;
  /** The product's public signing keys, shipped with the app; needed by verifyOffline(). */
  publicKeys?: VerifyLicenseFileOptions['publicKeys'];
  /** A fetch implementation (default: the platform's globalThis.fetch). */
  fetch?: typeof fetch;
  /** Time limit of each attempt, in ms (default 30 000; keep it short at start-up, where a user waits). */
  timeoutMs?: number;
  /** Further tries after a 429, a 503 or a network failure (default 2). */
  maxRetries?: number;
  /**
   * Called with every failure of a background heartbeat (the timer that start() runs). The timer
   * keeps going: at a third of the lease, two missed beats still leave the seat alive. Without this
   * option the failure is only kept in `lastError`; it is never an unhandled rejection.
   */
  onError?: (error: Error) => void;
  /** Called after every successful background heartbeat, with the renewed activation. */
  onHeartbeat?: (activation: Activation) => void;
}

/** What start() found: the seat, the verdict, and what the app may do. */
export interface LicensedAppState {
  /** This machine's activation (its seat), with `lease_expires_at` when the seat is floating. */
  activation: Activation;
  /** The validation answer for this machine. */
  validation: KeyValidation;
  /** The licence's effective entitlements (feature codes). */
  entitlements: string[];
  /** The policy's lease: null for a node-locked activation (no heartbeats), else seconds. */
  leaseSeconds: number | null;
  /** How often start() heartbeats, in ms (a third of the lease), or null when it does not. */
  heartbeatEveryMs: number | null;
}

/** Why verifyOffline() refused a file: a LicenseFileFailure, or a genuine file of another licence. */
export type OfflineFailure = LicenseFileFailure | 'license_mismatch';

/** The answer of verifyOffline(). */
export interface OfflineVerification {
  valid: boolean;
  /** Why not, when valid is false. */
  reason?: OfflineFailure;
  /** The signed facts when the signature holds (even if the file is refused for its dates or machine), else null. */
  license: LicenseFilePayload | null;
  /** The entitlements the file carries ([] when it carries none or does not verify). */
  entitlements: string[];
}

/** Statuses of a heartbeat that mean "this activation is no longer a seat": lapsed, reclaimed or deactivated. */
const SEAT_GONE: ReadonlySet<number> = new Set([404, 409, 410]);

/** How often to heartbeat a lease: a third of it, so that two missed beats still keep the seat. */
export function heartbeatIntervalMs(leaseSeconds: number): number {
  return Math.max(1_000, Math.floor((leaseSeconds * 1000) / 3));
}

/**
 * One licensed app on one machine, speaking for its licence with the licence key alone.
 *
 * ```ts
 * const app = new LicensedApp({ baseUrl, licenseKey, fingerprint, publicKeys, onError: console.warn });
 * const state = await app.start();              // activate, validate, heartbeat if floating
 * if (!state.validation.valid) refuse(state.validation.detail);
 * process.once('SIGTERM', () => app.stop().finally(() => process.exit(0)));
 * ```
 */
export class LicensedApp {
  /** The licence key this app speaks for. */
  readonly licenseKey: string;
  /** This machine's fingerprint. */
  readonly fingerprint: string;
  /** The last failure of a background heartbeat, or null. */
  lastError: Error | null = null;

  private readonly licenses: Licenses;
  private readonly updates: Updates;
  private readonly options: LicensedAppOptions;
  private current: Activation | null = null;
  private activating: Promise<Activation> | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private beating: Promise<void> | null = null;
  private running = false;
  private starting: Promise<LicensedAppState> | null = null;
  private stopping: Promise<void> | null = null;

  /** Checks the options; sends nothing until a method is called. */
  constructor(options: LicensedAppOptions) {
    if (typeof options !== 'object' || options === null)
      throw new TypeError('LicensedApp needs options: { baseUrl, licenseKey, fingerprint }');
    this.options = options;
    this.licenseKey = nonEmpty(options.licenseKey, 'licenseKey');
    this.fingerprint = nonEmpty(options.fingerprint, 'fingerprint');
    if (options.name !== undefined) nonEmpty(options.name, 'name');
    if (options.productId !== undefined) nonEmpty(options.productId, 'productId');
    for (const hook of ['onError', 'onHeartbeat'] as const)
      if (options[hook] !== undefined && typeof options[hook] !== 'function')
        throw new TypeError(`${hook} must be a function, got ${describe(options[hook])}`);
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function')
      throw new TypeError('no fetch available: pass options.fetch (Node ≥ 20 and browsers have one)');
    const http = new Transport({
      baseUrl: checkBaseUrl(options.baseUrl),
      licenseKey: this.licenseKey,
      // Called unbound, browsers throw "Illegal invocation".
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      timeoutMs: positiveNumber(options.timeoutMs, 'timeoutMs', DEFAULTS.timeoutMs),
      maxRetries: wholeNumber(options.maxRetries, 'maxRetries', DEFAULTS.maxRetries),
      maxRetryDelayMs: DEFAULTS.maxRetryDelayMs,
    });
    this.licenses = new Licenses(http);
    this.updates = new Updates(http);
  }

  /** This machine's remembered activation (its seat), or null before activate() and after deactivate(). */
  get activation(): Activation | null {
    return this.current;
  }

  /** True between start() and stop(): the heartbeat timer runs (for a floating seat). */
  get isRunning(): boolean {
    return this.running;
  }

  /**
   * Takes a seat for this machine: `POST /api/v1/licenses/{key}/activations` with the fingerprint.
   * Idempotent per fingerprint (the server answers the existing activation), and concurrent calls
   * share one request. The activation is remembered for heartbeat() and deactivate().
   *
   * @throws LicensingError 409 `conflict` when the licence is not active or every seat is taken
   *   (the detail starts with `activation_limit_reached` and `nextAction` is `free_a_seat`: see
   *   requestSeatRescue()), 401 for an unknown, suspended or revoked key.
   */
  async activate(): Promise<Activation> {
    if (!this.activating) {
      this.activating = this.licenses
        .activate(this.licenseKey, {
          fingerprint: this.fingerprint,
          ...(this.options.name !== undefined ? { name: this.options.name } : {}),
        })
        .then((activation) => {
          this.current = activation;
          return activation;
        })
        .finally(() => {
          this.activating = null;
        });
    }
    return this.activating;
  }

  /**
   * When every seat is taken (activate() or start() threw 409 with `nextAction: 'free_a_seat'`, or a
   * validation answered `next_action: free_a_seat`): e-mails the licence's owner a one-time customer
   * portal link to the licence's machines (`POST /api/v1/licenses/{key}/seat-rescue`). Once they free
   * one there, the next start() succeeds. Resolves with `{object: 'seat_rescue', status: 'queued'}`.
   *
   * @throws LicensingError 429 `rate_limited` when one was sent within the hour (`retryAfterS`),
   *   409 `conflict` when the licence has no customer e-mail.
   */
  async requestSeatRescue(): Promise<SeatRescue> {
    return this.licenses.seatRescue(this.licenseKey);
  }

  /**
   * Asks the product's update feed whether a newer release fits this machine:
   * `GET /api/v1/products/{productId}/updates?version=&platform=&arch=&channel=` (the constructor's
   * `productId`). Answers `{update_available: false}`, or `{update_available: true, release, artifact}`
   * with the file for this platform and arch (download it with downloadUrl(artifact)). No activation
   * is needed. Only releases the licence may have are offered (its channels, entitlements and, for an
   * expired licence under maintain_access, those published before it expired).
   *
   * @param options.channel the least stable channel the user accepts (default stable).
   * @throws LicensingError 403 when the licence may have no updates at all: `validationCode` says why
   *   (e.g. `expired` under the restrict strategy) and `nextAction` what the user can do (`renew`).
   */
  async checkForUpdate(options: UpdateCheckOptions): Promise<UpdateCheck> {
    if (this.options.productId === undefined)
      throw new TypeError('checkForUpdate needs the product: pass productId to new LicensedApp()');
    return this.updates.check(this.options.productId, options);
  }

  /**
   * A link to an update's file that works for 5 minutes with no credential (hand it to your
   * installer or fetch it): `GET artifact.url` with the licence credential, whose 303 is not followed.
   * Check the file's `size` and `sha256` (and your `signature`) before installing it. Needs a fetch
   * that shows redirects (Node, Electron's main process), not a browser page's.
   *
   * @throws TypeError when `artifact.url` is not on `baseUrl`'s server (the credential goes nowhere else).
   * @throws LicensingError 403 when the licence may not download it (`validationCode`, `nextAction`).
   */
  async downloadUrl(artifact: { url: string }): Promise<string> {
    return this.updates.downloadUrl(artifact);
  }

  /**
   * Asks whether this machine may run: `POST /api/v1/keys/validate` with the key and the fingerprint.
   * A "no" is an answer, not an error: read `valid`, `code`, `detail` and `next_action`
   * (`lease_expired` → activate() again; `entitlements_missing` → the detail names the codes missing).
   *
   * @param options.entitlements feature codes the licence must include.
   */
  async validate(options: { entitlements?: readonly string[] } = {}): Promise<KeyValidation> {
    if (typeof options !== 'object' || options === null)
      throw new TypeError(`validate options must be an object, got ${describe(options)}`);
    return this.licenses.validate(this.licenseKey, {
      fingerprint: this.fingerprint,
      ...(this.options.productId !== undefined ? { productId: this.options.productId } : {}),
      ...(options.entitlements !== undefined ? { entitlements: codeList(options.entitlements, 'entitlements') } : {}),
    });
  }

  /**
   * Renews the lease of the remembered activation:
   * `POST /api/v1/licenses/{key}/activations/{id}/heartbeat`, answering it with its new
   * `lease_expires_at`. When the seat is gone (lapsed, reclaimed or deactivated: 404, 409 or 410),
   * it activates once more and answers the new activation; with no activation remembered yet it
   * activates. Any other failure, or a failed re-activation (every seat taken meanwhile), is thrown.
   */
  async heartbeat(): Promise<Activation> {
    const seat = this.current ?? (await this.activate());
    try {
      const renewed = await this.licenses.heartbeat(this.licenseKey, seat.id);
      // A stop() or a re-activation may have replaced the seat while this was on its way.
      if (this.current?.id === seat.id) this.current = renewed;
      return renewed;
    } catch (err) {
      if (!(err instanceof LicensingError) || !SEAT_GONE.has(err.status)) throw err;
      if (this.current?.id === seat.id) this.current = null;
      return this.activate();
    }
  }

  /**
   * Releases the remembered seat at once: `DELETE /api/v1/licenses/{key}/activations/{id}?fingerprint=…`.
   * Does nothing when there is none; a seat the server no longer has (404) counts as released.
   * Does not stop the heartbeat timer: use stop() for that.
   */
  async deactivate(): Promise<void> {
    const seat = this.current;
    if (!seat) return;
    try {
      // Its own fingerprint: releasing its own floating seat never spends the customer's deactivations.
      await this.licenses.deactivate(this.licenseKey, seat.id, { fingerprint: seat.fingerprint });
    } catch (err) {
      if (!(err instanceof LicensingError) || err.status !== 404) throw err;
    }
    if (this.current?.id === seat.id) this.current = null;
  }

  /**
   * Starts the licensed session: activate(), then validate() (whose licence names the policy's
   * `lease_seconds` and the entitlements), then, for a floating seat, a heartbeat every third of the
   * lease on a timer that never keeps the process alive (unref'd). Background failures go to
   * `onError` and `lastError`, never to an unhandled rejection. Calling it again restarts the timer.
   *
   * @returns the activation, the validation answer, the entitlements and the heartbeat period.
   * @throws LicensingError when activation fails (e.g. every seat is taken) or the server is unreachable.
   */
  async start(): Promise<LicensedAppState> {
    this.halt();
    const starting = this.begin();
    this.starting = starting;
    try {
      return await starting;
    } finally {
      if (this.starting === starting) this.starting = null;
    }
  }

  private async begin(): Promise<LicensedAppState> {
    const activation = await this.activate();
    const validation = await this.validate();
    const leaseSeconds = validation.license?.policy?.lease_seconds ?? null;
    const heartbeatEveryMs = leaseSeconds ? heartbeatIntervalMs(leaseSeconds) : null;
    // A stop() called meanwhile wins: it waits for this start and then releases the seat.
    if (!this.stopping) {
      this.running = true;
      if (heartbeatEveryMs !== null) this.schedule(heartbeatEveryMs);
    }
    return {
      activation: this.current ?? activation,
      validation,
      entitlements: validation.entitlements ?? validation.license?.entitlements ?? [],
      leaseSeconds,
      heartbeatEveryMs,
    };
  }

  /**
   * Ends the session: stops the heartbeat timer, waits for a start() or a heartbeat on its way, and
   * releases the seat (deactivate()). Safe to call more than once: concurrent calls share one
   * release, and later ones find no seat left to release. If the release fails (no network) the
   * error is thrown and a later stop() tries again; a floating seat left behind lapses by itself.
   */
  async stop(): Promise<void> {
    this.halt();
    if (!this.stopping) {
      const stopping = (async () => {
        await this.starting?.catch(() => undefined);
        this.halt();
        await this.beating;
        await this.deactivate();
      })();
      this.stopping = stopping;
      const done = () => {
        if (this.stopping === stopping) this.stopping = null;
      };
      stopping.then(done, done);
    }
    return this.stopping;
  }

  /**
   * A signed licence file bound to this machine, for offline use: `POST /api/v1/licenses/{key}/file`
   * with the fingerprint. Keep it on disk and check it with verifyOffline() when the server cannot
   * be reached. A licence that requires activation needs this machine activated first.
   *
   * @param options.ttlDays how long the file is valid offline, 1–365 days (default 30).
   */
  async file(options: { ttlDays?: number } = {}): Promise<LicenseFile> {
    if (typeof options !== 'object' || options === null)
      throw new TypeError(`file options must be an object, got ${describe(options)}`);
    return this.licenses.file(this.licenseKey, {
      fingerprint: this.fingerprint,
      ...(options.ttlDays !== undefined ? { ttlDays: options.ttlDays } : {}),
    });
  }

  /**
   * Checks a licence file with no network: the Ed25519 signature with the `publicKeys` given to the
   * constructor, the dates (`valid_until`, not issued in this machine's future), this machine's
   * fingerprint, and that it is a file of this licence key. Answers `{valid, reason?, license,
   * entitlements}`; never throws for a bad file (only for missing `publicKeys`).
   *
   * @param options.now the time to check against (default: now).
   */
  async verifyOffline(file: unknown, options: { now?: Date | number } = {}): Promise<OfflineVerification> {
    if (this.options.publicKeys === undefined)
      throw new TypeError('verifyOffline needs the product public keys: pass publicKeys to new LicensedApp()');
    const result = await verifyLicenseFile(file, {
      publicKeys: this.options.publicKeys,
      fingerprint: this.fingerprint,
      ...(options.now !== undefined ? { now: options.now } : {}),
    });
    const entitlements =
      result.license && Array.isArray(result.license.entitlements) ? result.license.entitlements : [];
    if (!result.valid) return { valid: false, reason: result.reason, license: result.license, entitlements: [] };
    // A genuine file of another licence proves nothing about this one.
    if (!result.license || canonicalKey(result.license.license_key) !== canonicalKey(this.licenseKey))
      return { valid: false, reason: 'license_mismatch', license: result.license, entitlements: [] };
    if (this.options.productId !== undefined && result.license.product_id !== this.options.productId)
      return { valid: false, reason: 'license_mismatch', license: result.license, entitlements: [] };
    return { valid: true, license: result.license, entitlements: [...entitlements] };
  }

  /** Stops the timer; start() and stop() call it. */
  private halt(): void {
    this.running = false;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** The next background heartbeat, one at a time (each waits for the previous answer). */
  private schedule(everyMs: number): void {
    const timer = setTimeout(() => {
      this.timer = null;
      this.beating = this.beat().finally(() => {
        this.beating = null;
        if (this.running && this.timer === null) this.schedule(everyMs);
      });
    }, everyMs);
    // Node: the timer alone never keeps the process running (browsers have no unref).
    (timer as { unref?: () => void }).unref?.();
    this.timer = timer;
  }

  /** One background heartbeat; never rejects, so nothing it does is an unhandled rejection. */
  private async beat(): Promise<void> {
    try {
      const activation = await this.heartbeat();
      this.lastError = null;
      this.options.onHeartbeat?.(activation);
    } catch (err) {
      this.report(err);
    }
  }

  private report(err: unknown): void {
    const error = err instanceof Error ? err : new Error(String(err));
    this.lastError = error;
    try {
      this.options.onError?.(error);
    } catch {
      // An onError that throws must not become an unhandled rejection either.
    }
  }
}

function nonEmpty(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new TypeError(`${name} must be a non-empty string, got ${describe(value)}`);
  return value.trim();
}

/**
 * Keys as the server compares them. A native key (30 Crockford characters once case, spaces, hyphens
 * and the look-alikes O→0, I/L→1 are forgiven) by that reading; any other (a key imported from Keygen,
 * Lemon Squeezy, Gumroad…) exactly, as the server matches it: only surrounding spaces are dropped.
 */
function canonicalKey(key: string): string {
  const native = key.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  return /^[0-9A-HJKMNP-TV-Z]{30}$/.test(native) ? native : key.trim();
}
