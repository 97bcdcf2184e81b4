import { idempotencyKey, objectArg, segment, type CreateOptions } from '../arguments';
import type { Transport } from '../http';
import { PageList, type Page } from '../pagination';
import type { CheckoutCreate, CheckoutListParams, CheckoutSession } from '../types';

/** /api/v1/checkout: hosted payment pages that issue a licence when paid. */
export class Checkout {
  constructor(private readonly http: Transport) {}

  /** Opens a session; send the buyer to its `url`. Always sent with an Idempotency-Key. */
  async create(body: CheckoutCreate, options?: CreateOptions): Promise<CheckoutSession> {
    return this.http.request({
      method: 'POST',
      path: '/api/v1/checkout',
      body: objectArg(body, 'checkout session'),
      idempotent: false,
      idempotencyKey: idempotencyKey(options),
    });
  }

  async get(id: string): Promise<CheckoutSession> {
    return this.http.request({
      method: 'GET',
      path: `/api/v1/checkout/${segment(id, 'checkout session id')}`,
      idempotent: true,
    });
  }

  list(params: CheckoutListParams = {}): PageList<CheckoutSession, CheckoutListParams> {
    return new PageList(
      (query) =>
        this.http.request<Page<CheckoutSession>>({ method: 'GET', path: '/api/v1/checkout', query, idempotent: true }),
      objectArg(params, 'list params'),
    );
  }

  /** Closes an open session now. */
  async expire(id: string): Promise<CheckoutSession> {
    return this.http.request({
      method: 'POST',
      path: `/api/v1/checkout/${segment(id, 'checkout session id')}/expire`,
      idempotent: false,
    });
  }
}
