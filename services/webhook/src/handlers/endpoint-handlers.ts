import { lookup as dnsLookup } from 'node:dns/promises';
import { AppError, isId, newEvent, newId, seal, sealingKey, type Handlers, type ServiceContext } from '@licensing/runtime';
import type { WebhookDelivery, WebhookEndpoint, WebhookServiceService } from '@licensing/proto';
import type { DeliveryDoc, DeliveryStore } from '../store/deliveries';
import { webhookBody } from '../events/fanout';
import { SECRET_OVERLAP_MS, checkDescription, endpointCapReached, checkEvents, liveSecrets, newSecret } from '../domain/endpoint';
import { checkWebhookUrl, type Lookup, type UrlPolicy } from '../domain/ssrf';
import type { EndpointDoc } from '../store/models';
import type { EndpointStore } from '../store/queries';
import type { WebhookConfig } from '../config';

const resolveAll: Lookup = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

const toDelivery = (d: DeliveryDoc): WebhookDelivery => ({
  id: d._id,
  endpointId: d.endpoint_id,
  eventId: d.event_id,
  eventType: d.event_type,
  status: d.status,
  attempts: d.attempts,
  lastStatusCode: d.last_status_code ?? 0,
  lastError: d.last_error ?? '',
  lastLatencyMs: d.last_latency_ms ?? 0,
  nextAttemptAt: d.next_attempt_at ? d.next_attempt_at.toISOString() : '',
  createdAt: d.created_at.toISOString(),
  deliveredAt: d.delivered_at ? d.delivered_at.toISOString() : '',
});

export function endpointHandlers(ctx: ServiceContext<WebhookConfig>, store: EndpointStore, deliveries: DeliveryStore, lookup: Lookup = resolveAll): Handlers<typeof WebhookServiceService> {
  const key = sealingKey(ctx.config.WEBHOOK_SECRET_KEY, 'WEBHOOK_SECRET_KEY');
  const production = ctx.config.NODE_ENV === 'production';
  const policy: UrlPolicy = { httpsOnly: production, allowLoopback: !production && ctx.config.WEBHOOK_ALLOW_LOOPBACK };

  const toEndpoint = (d: EndpointDoc): WebhookEndpoint => ({ id: d._id, accountId: d.account_id, url: d.url, events: d.events, description: d.description, enabled: d.enabled, createdAt: d.created_at.toISOString() });

  async function find(accountId: string, id: string): Promise<EndpointDoc> {
    const d = isId('we', id) ? await store.find(accountId, id) : null;
    if (!d) throw AppError.notFound('webhook endpoint');
    return d;
  }

  return {
    async createEndpoint(req) {
      const url = await checkWebhookUrl(req.url.trim(), policy, lookup);
      const secret = newSecret();
      const now = ctx.clock.now();
      const doc: Omit<EndpointDoc, 'slot_key'> = {
        _id: newId('we'),
        account_id: req.accountId,
        url,
        events: checkEvents(req.events),
        description: checkDescription(req.description),
        enabled: true,
        failing_since: null,
        secrets: [{ sealed: seal(Buffer.from(secret), key), created_at: now, expires_at: null }],
        created_at: now,
        deleted_at: null,
      };
      const stored = await store.insertWithinCap(doc, ctx.config.WEBHOOK_MAX_ENDPOINTS);
      if (stored === null) endpointCapReached(ctx.config.WEBHOOK_MAX_ENDPOINTS);
      if (stored === 'contended') throw new AppError('conflict', 'other webhook endpoints are being created for this account at this moment; try again');
      return { endpoint: toEndpoint(stored as EndpointDoc), secret };
    },

    async listEndpoints(req) {
      const { items, page } = await store.list(req.accountId, req.page);
      return { data: items.map(toEndpoint), page };
    },

    async getEndpoint(req) {
      return toEndpoint(await find(req.accountId, req.id));
    },

    async updateEndpoint(req) {
      const current = await find(req.accountId, req.id);
      const changes: Partial<EndpointDoc> = {};
      if (req.url !== undefined) changes.url = await checkWebhookUrl(req.url.trim(), policy, lookup);
      if (req.events.length) changes.events = checkEvents(req.events);
      if (req.description !== undefined) changes.description = checkDescription(req.description);
      if (req.enabled !== undefined) changes.enabled = req.enabled;
      if (!Object.keys(changes).length) throw new AppError('invalid_request', 'nothing to change: give url, events, description and/or enabled');
      await store.update(req.accountId, req.id, changes);
      return toEndpoint({ ...current, ...changes });
    },

    async deleteEndpoint(req) {
      const current = await find(req.accountId, req.id);
      await store.remove(req.accountId, req.id, ctx.clock.now());
      return toEndpoint({ ...current, enabled: false });
    },

    async listDeliveries(req) {
      const endpoint = await find(req.accountId, req.endpointId);
      const { items, page } = await deliveries.list(endpoint._id, req.page);
      return { data: items.map(toDelivery), page };
    },

    async retryDelivery(req) {
      const endpoint = await find(req.accountId, req.endpointId);
      const d = await deliveries.find(endpoint._id, req.deliveryId);
      if (!d) throw AppError.notFound('delivery');
      if (d.status === 'delivered') throw new AppError('conflict', 'this delivery already succeeded');
      if (!endpoint.enabled) throw new AppError('conflict', 'the endpoint is disabled: enable it first');
      const changes = { status: 'pending' as const, next_attempt_at: ctx.clock.now() };
      await deliveries.update(d._id, changes);
      return toDelivery({ ...d, ...changes });
    },

    async sendTestEvent(req) {
      const endpoint = await find(req.accountId, req.id);
      const event = newEvent('webhook.test' as never, req.accountId, { endpoint: { id: endpoint._id } } as never, ctx.clock.now());
      const now = ctx.clock.now();
      const doc: DeliveryDoc = {
        _id: `dlv_${event.id.replace(/^evt_/, '')}_${endpoint._id.replace(/^we_/, '')}`,
        account_id: req.accountId,
        endpoint_id: endpoint._id,
        event_id: event.id,
        event_type: 'webhook.test',
        body: webhookBody(event),
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        last_status_code: null,
        last_error: null,
        last_latency_ms: null,
        created_at: now,
        delivered_at: null,
      };
      await deliveries.record(doc);
      return toDelivery(doc);
    },

    async rotateSecret(req) {
      const current = await find(req.accountId, req.id);
      const now = ctx.clock.now();
      const secret = newSecret();
      // The previous secrets keep signing for 24 hours, so receivers can switch without a gap.
      const kept = liveSecrets(current.secrets, now).map((s) => ({ ...s, expires_at: s.expires_at ?? new Date(now.getTime() + SECRET_OVERLAP_MS) }));
      await store.update(req.accountId, req.id, { secrets: [{ sealed: seal(Buffer.from(secret), key), created_at: now, expires_at: null }, ...kept] });
      return { endpoint: toEndpoint(current), secret };
    },
  };
}
