import { describe, idempotencyKey, objectArg, optionalString, segment, type CreateOptions } from '../arguments';
import type { Transport } from '../http';
import { PageList, type Page, type PageParams } from '../pagination';
import type {
  Activation,
  KeyValidation,
  License,
  LicenseCreate,
  LicenseCreated,
  LicenseFile,
  LicenseListParams,
  LicenseBatch,
  LicenseBatchCreate,
  LicenseReroll,
  LicenseUpdate,
  SeatRescue,
} from '../types';

export interface ValidateOptions {
  /** This machine's fingerprint (needed when the policy requires activation). */
  fingerprint?: string;
  /** The product the key must belong to (else the answer is product_mismatch). */
  productId?: string;
  /** Feature codes the licence must include, else the answer is `entitlements_missing` naming the missing ones. */
  entitlements?: readonly string[];
}

export interface LicenseFileOptions {
  /** Bind the file to one (activated) machine. */
  fingerprint?: string;
  /** How long the file is valid offline, 1–365 days (default 30). */
  ttlDays?: number;
}

export interface ActivateOptions {
  fingerprint: string;
  /** A name for the machine, shown in the activation list. */
  name?: string;
}

/** /api/v1/licenses and validation: issue, check and manage licence keys. */
export class Licenses {
  constructor(private readonly http: Transport) {}

  /**
   * Issues a licence key; answers the REST body `{success, license_key, license}`.
   * Always sent with an Idempotency-Key (yours, or a random one), so a retry never issues twice.
   */
  async create(body: LicenseCreate, options?: CreateOptions): Promise<LicenseCreated> {
    return this.http.request({
      method: 'POST',
      path: '/api/v1/licenses',
      body: objectArg(body, 'license'),
      idempotent: false,
      idempotencyKey: idempotencyKey(options),
    });
  }

  /**
   * Asks whether a key is valid: `{valid, code, detail, status, expires_at, next_action, cache_until, license}`.
   * Sent as POST /api/v1/keys/validate so that the key never appears in a URL or an access log.
   */
  async validate(key: string, options: ValidateOptions = {}): Promise<KeyValidation> {
    if (typeof key !== 'string' || key.trim() === '') throw new TypeError('key must be a non-empty string');
    const body = {
      key,
      ...(options.productId !== undefined ? { product_id: optionalString(options.productId, 'productId') } : {}),
      ...(options.fingerprint !== undefined ? { fingerprint: optionalString(options.fingerprint, 'fingerprint') } : {}),
      ...(options.entitlements !== undefined ? { entitlements: codeList(options.entitlements, 'entitlements') } : {}),
    };
    return this.http.request({ method: 'POST', path: '/api/v1/keys/validate', body, idempotent: true });
  }

  /**
   * Issues up to 1,000 licences of one product as a job; answers it `running`. Always sent with an
   * Idempotency-Key (yours, or a random one), so a retry answers the same job and issues nothing twice.
   * Follow it with `batchStatus(id)` until its `status` is `done`.
   */
  async batch(body: LicenseBatchCreate, options?: CreateOptions): Promise<LicenseBatch> {
    return this.http.request({
      method: 'POST',
      path: '/api/v1/licenses/batch',
      body: objectArg(body, 'batch'),
      idempotent: false,
      idempotencyKey: idempotencyKey(options),
    });
  }

  /** A licence batch job: its progress, the keys issued and the items that failed. */
  async batchStatus(id: string): Promise<LicenseBatch> {
    return this.http.request({
      method: 'GET',
      path: `/api/v1/licenses/batch/${segment(id, 'id')}`,
      idempotent: true,
    });
  }

  /**
   * Gives the licence a new key, keeping everything else; the old key validates for `grace_hours`
   * (0–720, default 0) with `next_action: "update_key"`. Safe to repeat with the old key (it answers
   * the licence with its new key).
   */
  async reroll(key: string, body: LicenseReroll = {}): Promise<License> {
    return this.http.request({
      method: 'POST',
      path: `${this.path(key)}/reroll`,
      body: objectArg(body, 'reroll'),
      idempotent: true,
    });
  }

  async get(key: string): Promise<License> {
    return this.http.request({ method: 'GET', path: this.path(key), idempotent: true });
  }

  list(params: LicenseListParams = {}): PageList<License, LicenseListParams> {
    return new PageList(
      (query) => this.http.request<Page<License>>({ method: 'GET', path: '/api/v1/licenses', query, idempotent: true }),
      objectArg(params, 'list params'),
    );
  }

  /** Changes the customer e-mail or merges metadata (an empty value removes an entry). */
  async update(key: string, patch: LicenseUpdate): Promise<License> {
    return this.http.request({
      method: 'PATCH',
      path: this.path(key),
      body: objectArg(patch, 'patch'),
      idempotent: true,
    });
  }

  /**
   * Deletes the licence and its activations (its key then validates as not_found). Refused (409) while a
   * subscription bills it. Not repeated after a lost answer: a second try would meet 404.
   */
  async delete(key: string): Promise<void> {
    await this.http.request({ method: 'DELETE', path: this.path(key), idempotent: false });
  }

  // State changes are not repeated after a lost answer: a second try would meet 409.
  async suspend(key: string): Promise<License> {
    return this.http.request({ method: 'POST', path: `${this.path(key)}/suspend`, idempotent: false });
  }

  async reinstate(key: string): Promise<License> {
    return this.http.request({ method: 'POST', path: `${this.path(key)}/reinstate`, idempotent: false });
  }

  async revoke(key: string): Promise<License> {
    return this.http.request({ method: 'POST', path: `${this.path(key)}/revoke`, idempotent: false });
  }

  /** Extends expiry by the policy's duration; never repeated automatically (two tries would renew twice). */
  async renew(key: string): Promise<License> {
    return this.http.request({ method: 'POST', path: `${this.path(key)}/renew`, idempotent: false });
  }

  /** Takes an activation slot for a machine; the same fingerprint again answers the existing activation. */
  async activate(key: string, options: ActivateOptions): Promise<Activation> {
    objectArg(options, 'activation');
    const fingerprint = optionalString(options.fingerprint, 'fingerprint');
    if (fingerprint === undefined) throw new TypeError('fingerprint is required to activate a machine');
    const body = { fingerprint, ...(options.name !== undefined ? { name: options.name } : {}) };
    return this.http.request({ method: 'POST', path: `${this.path(key)}/activations`, body, idempotent: true });
  }

  /**
   * Keeps a floating seat (policy `lease_seconds`) alive: answers the activation with its new
   * `lease_expires_at`. A lapsed or deactivated activation is an error (re-activate it); so is a
   * node-locked one, which has no lease. Apps use `LicensedApp`, which heartbeats by itself.
   */
  async heartbeat(key: string, activationId: string): Promise<Activation> {
    return this.http.request({
      method: 'POST',
      path: `${this.path(key)}/activations/${segment(activationId, 'activation id')}/heartbeat`,
      // Repeating a heartbeat only extends the same lease again.
      idempotent: true,
    });
  }

  /**
   * Frees an activation slot. With an app credential, this counts against the policy's
   * customer_deactivations_per_30_days unless `fingerprint` is the seat's own and the seat is floating
   * (an app releasing its own seat).
   */
  async deactivate(key: string, activationId: string, options: { fingerprint?: string } = {}): Promise<void> {
    await this.http.request({
      method: 'DELETE',
      path: `${this.path(key)}/activations/${segment(activationId, 'activation id')}`,
      ...(options.fingerprint ? { query: { fingerprint: options.fingerprint } } : {}),
      idempotent: true,
    });
  }

  activations(key: string, params: PageParams = {}): PageList<Activation> {
    const path = `${this.path(key)}/activations`;
    return new PageList(
      (query) => this.http.request<Page<Activation>>({ method: 'GET', path, query, idempotent: true }),
      objectArg(params, 'list params'),
    );
  }

  /** A signed licence file for offline checks (verify it with verifyLicenseFile). */
  async file(key: string, options: LicenseFileOptions & { ttl_days?: number } = {}): Promise<LicenseFile> {
    objectArg(options, 'file options');
    const ttlDays = options.ttlDays ?? options.ttl_days;
    const body = {
      ...(options.fingerprint !== undefined ? { fingerprint: optionalString(options.fingerprint, 'fingerprint') } : {}),
      ...(ttlDays !== undefined ? { ttl_days: ttlDays } : {}),
    };
    return this.http.request({ method: 'POST', path: `${this.path(key)}/file`, body, idempotent: true });
  }

  /**
   * Seat rescue: e-mails the licence's owner a one-time customer portal link to its machines, where
   * they free one (for an activation refused with `next_action: free_a_seat`). A licence credential
   * or a validate-scope key may call it. Never repeated automatically.
   *
   * @throws LicensingError 429 `rate_limited` when one was sent within the hour (`retryAfterS` says
   *   when the next may be), 409 `conflict` when the licence has no customer e-mail.
   */
  async seatRescue(key: string): Promise<SeatRescue> {
    return this.http.request({ method: 'POST', path: `${this.path(key)}/seat-rescue`, idempotent: false });
  }

  private path(key: string): string {
    return `/api/v1/licenses/${segment(key, 'licence key')}`;
  }
}

/** An array of strings, as given (the server checks the codes themselves and answers 400 naming a bad one). */
export function codeList(value: unknown, name: string): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v === ''))
    throw new TypeError(`${name} must be an array of non-empty strings, got ${describe(value)}`);
  return [...value];
}
