import { AppError, type CallOptions } from '@licensing/runtime';
import type {
  CreateLicenseRequest,
  GetProductRequest,
  License,
  Product,
  TransitionLicenseRequest,
} from '@licensing/proto';
import type { PaymentPage, PaymentProvider, PaymentStart } from '../../../services/checkout/src/domain/payments';
import type { ProductLookup } from '../../../services/checkout/src/use-cases/create-session';
import type { LicenseIssuer } from '../../../services/checkout/src/use-cases/completion';

// The services checkout calls (product, licence) and its payment provider, as recorded stand-ins.

export class FakeProducts implements ProductLookup {
  readonly products = new Map<string, Product>();
  readonly calls: { req: GetProductRequest; opts?: CallOptions }[] = [];

  async getProduct(req: GetProductRequest, opts?: CallOptions): Promise<Product> {
    this.calls.push({ req, opts });
    const p = this.products.get(req.id);
    if (!p || p.account_id !== req.account_id) throw AppError.notFound('product');
    return p;
  }
}

/** A licence service that issues one licence per idempotency key, and can be told to fail. */
export class FakeLicenses implements LicenseIssuer {
  readonly created: CreateLicenseRequest[] = [];
  readonly transitions: TransitionLicenseRequest[] = [];
  /** Errors the next createLicense calls throw, in order. */
  readonly createFailures: Error[] = [];
  transitionFailure?: Error;
  private readonly byKey = new Map<string, string>();

  /** While set, createLicense waits for it (a licence service still answering). */
  createGate?: Promise<void>;

  async createLicense(req: CreateLicenseRequest): Promise<License> {
    this.created.push(req);
    if (this.createGate) await this.createGate;
    const failure = this.createFailures.shift();
    if (failure) throw failure;
    if (!this.byKey.has(req.idempotency_key)) this.byKey.set(req.idempotency_key, `KEY-${this.byKey.size + 1}`);
    return { key: this.byKey.get(req.idempotency_key)! } as License;
  }

  async transitionLicense(req: TransitionLicenseRequest): Promise<License> {
    this.transitions.push(req);
    if (this.transitionFailure) throw this.transitionFailure;
    return { key: req.key } as License;
  }
}

export class FakeProvider implements PaymentProvider {
  readonly started: PaymentStart[] = [];
  readonly cancelled: string[] = [];
  /** What cancel() answers: false = the buyer already paid on the provider's side. */
  cancelAnswer = true;
  startFailure?: Error;

  constructor(
    readonly name: 'test' | 'stripe' = 'test',
    readonly takesCardsOnPage = name === 'test',
  ) {}

  async start(req: PaymentStart): Promise<PaymentPage> {
    this.started.push(req);
    if (this.startFailure) throw this.startFailure;
    return this.name === 'stripe'
      ? { url: `https://pay.example/${req.sessionId}`, providerSessionId: `cs_test_${req.sessionId}`, livemode: false }
      : { url: req.hostedPageUrl, providerSessionId: '', livemode: false };
  }

  async cancel(providerSessionId: string): Promise<boolean> {
    this.cancelled.push(providerSessionId);
    return this.cancelAnswer;
  }

  async charge(): Promise<{ ok: false; message: string }> {
    return { ok: false, message: 'not used' };
  }
}
