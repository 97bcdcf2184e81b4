// The entry point: new LicensingClient({ baseUrl, apiKey }) and one property
// per resource. Everything goes through one Transport, so retries, timeouts
// and errors behave the same for every call.
import { describe } from './arguments';
import { Transport } from './http';
import { Checkout } from './resources/checkout';
import { Subscriptions } from './resources/subscriptions';
import { Customers } from './resources/customers';
import { Licenses } from './resources/licenses';
import { Products } from './resources/products';
import { Releases } from './resources/releases';
import { Webhooks } from './resources/webhooks';
import type { Status } from './types';

export interface LicensingClientOptions {
  /** Where the gateway answers, e.g. https://licensing.example.com (paths /api/v1/… are added). */
  baseUrl: string;
  /** An API key: lk_full_… for everything, lk_val_… for validation and status only. */
  apiKey: string;
  /** A fetch implementation (default: the platform's globalThis.fetch). */
  fetch?: typeof fetch;
  /** Time limit of each attempt, in ms (default 30 000). */
  timeoutMs?: number;
  /** Further tries after a 429, a 503 or a network failure (default 2; 0 turns retries off). */
  maxRetries?: number;
  /** A Retry-After longer than this (ms) is not waited for; the error is thrown instead (default 60 000). */
  maxRetryDelayMs?: number;
}

export const DEFAULTS = { timeoutMs: 30_000, maxRetries: 2, maxRetryDelayMs: 60_000 } as const;

export class LicensingClient {
  readonly products: Products;
  readonly licenses: Licenses;
  readonly checkout: Checkout;
  readonly subscriptions: Subscriptions;
  readonly webhooks: Webhooks;
  readonly customers: Customers;
  readonly releases: Releases;
  private readonly http: Transport;

  constructor(options: LicensingClientOptions) {
    if (typeof options !== 'object' || options === null)
      throw new TypeError('LicensingClient needs options: { baseUrl, apiKey }');
    const baseUrl = checkBaseUrl(options.baseUrl);
    if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '')
      throw new TypeError(`apiKey must be a non-empty string, got ${describe(options.apiKey)}`);
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function')
      throw new TypeError('no fetch available: pass options.fetch (Node ≥ 20 and browsers have one)');
    this.http = new Transport({
      baseUrl,
      apiKey: options.apiKey.trim(),
      // Called unbound, browsers throw "Illegal invocation".
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      timeoutMs: positiveNumber(options.timeoutMs, 'timeoutMs', DEFAULTS.timeoutMs),
      maxRetries: wholeNumber(options.maxRetries, 'maxRetries', DEFAULTS.maxRetries),
      maxRetryDelayMs: wholeNumber(options.maxRetryDelayMs, 'maxRetryDelayMs', DEFAULTS.maxRetryDelayMs),
    });
    this.products = new Products(this.http);
    this.licenses = new Licenses(this.http);
    this.checkout = new Checkout(this.http);
    this.subscriptions = new Subscriptions(this.http);
    this.webhooks = new Webhooks(this.http);
    this.customers = new Customers(this.http);
    this.releases = new Releases(this.http);
  }

  /** GET /api/v1/status: every service and dependency; `degraded` means requests may still succeed. */
  async status(): Promise<Status> {
    return this.http.request({ method: 'GET', path: '/api/v1/status', idempotent: true });
  }
}

export function checkBaseUrl(value: unknown): string {
  if (typeof value !== 'string')
    throw new TypeError(`baseUrl must be a string such as "https://licensing.example.com", got ${describe(value)}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`baseUrl must be an absolute URL such as "https://licensing.example.com", got "${value}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new TypeError(`baseUrl must be http(s), got "${url.protocol}"`);
  if (url.search || url.hash) throw new TypeError('baseUrl must not have a query or fragment');
  return url.toString();
}

export function positiveNumber(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new TypeError(`${name} must be a positive number of milliseconds, got ${describe(value)}`);
  return value;
}

export function wholeNumber(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new TypeError(`${name} must be a whole number ≥ 0, got ${describe(value)}`);
  return value;
}
