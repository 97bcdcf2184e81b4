import { objectArg, segment } from '../arguments';
import type { Transport } from '../http';
import { PageList, type Page } from '../pagination';
import type {
  PageOnlyParams,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointUpdate,
  WebhookEndpointWithSecret,
  WebhookListParams,
} from '../types';

/** /api/v1/webhooks: endpoints that receive signed events, and their delivery logs. */
export class Webhooks {
  constructor(private readonly http: Transport) {}

  /** Adds an endpoint; the answer holds its signing secret, shown only here. */
  async create(body: WebhookEndpointCreate): Promise<WebhookEndpointWithSecret> {
    return this.http.request({
      method: 'POST',
      path: '/api/v1/webhooks',
      body: objectArg(body, 'webhook endpoint'),
      idempotent: false,
    });
  }

  async get(id: string): Promise<WebhookEndpoint> {
    return this.http.request({ method: 'GET', path: this.path(id), idempotent: true });
  }

  list(params: WebhookListParams = {}): PageList<WebhookEndpoint, WebhookListParams> {
    return new PageList(
      (query) =>
        this.http.request<Page<WebhookEndpoint>>({ method: 'GET', path: '/api/v1/webhooks', query, idempotent: true }),
      objectArg(params, 'list params'),
    );
  }

  /** Changes the endpoint; `enabled: true` re-enables one that was disabled. */
  async update(id: string, patch: WebhookEndpointUpdate): Promise<WebhookEndpoint> {
    return this.http.request({
      method: 'PATCH',
      path: this.path(id),
      body: objectArg(patch, 'patch'),
      idempotent: true,
    });
  }

  async delete(id: string): Promise<void> {
    await this.http.request({ method: 'DELETE', path: this.path(id), idempotent: true });
  }

  /** The endpoint's delivery log, newest first. */
  deliveries(id: string, params: PageOnlyParams = {}): PageList<WebhookDelivery, PageOnlyParams> {
    const path = `${this.path(id)}/deliveries`;
    return new PageList(
      (query) => this.http.request<Page<WebhookDelivery>>({ method: 'GET', path, query, idempotent: true }),
      objectArg(params, 'list params'),
    );
  }

  /** Delivers one logged delivery again now. */
  async retry(id: string, deliveryId: string): Promise<WebhookDelivery> {
    return this.http.request({
      method: 'POST',
      path: `${this.path(id)}/deliveries/${segment(deliveryId, 'delivery id')}/retry`,
      idempotent: false,
    });
  }

  /** Queues a webhook.test event to the endpoint. */
  async test(id: string): Promise<WebhookDelivery> {
    return this.http.request({ method: 'POST', path: `${this.path(id)}/test`, idempotent: false });
  }

  /** A new signing secret; deliveries carry both signatures for 24 h. */
  async rotateSecret(id: string): Promise<WebhookEndpointWithSecret> {
    return this.http.request({ method: 'POST', path: `${this.path(id)}/rotate-secret`, idempotent: false });
  }

  private path(id: string): string {
    return `/api/v1/webhooks/${segment(id, 'webhook endpoint id')}`;
  }
}
