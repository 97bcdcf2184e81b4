import { WebhookServiceService } from '@licensing/proto';
import { Keyring, runMain, startService, type ServiceRecipe, type StartOptions } from '@licensing/runtime';
import { webhookSchema, type WebhookConfig } from './config';
import { endpointHandlers } from './handlers/endpoint-handlers';
import { endpointModel } from './store/models';
import { EndpointStore } from './store/queries';
import { DeliveryStore, deliveryModel, type DeliveryDoc } from './store/deliveries';
import { EndpointCache } from './store/endpoint-cache';
import { LeaseStore, leaseModel } from './store/endpoint-leases';
import { Dispatcher } from './jobs/dispatcher';
import { Fanout } from './events/fanout';
import { endpointDeps } from './use-cases/deps';
import { webhookAccess } from './access';
import { resealEndpointSecrets } from './jobs/reseal';

export const webhookService: ServiceRecipe<typeof webhookSchema> = {
  name: 'webhook',
  schema: webhookSchema,
  async setup(ctx) {
    const store = new EndpointStore(endpointModel(ctx.db));
    ctx.outbox.track(store.Endpoint);
    const cache = new EndpointCache(store, ctx.config.WEBHOOK_ENDPOINT_CACHE_MS);
    store.onWrite = (accountId) => cache.invalidate(accountId);
    const deliveries = new DeliveryStore(deliveryModel(ctx.db));
    const production = ctx.config.NODE_ENV === 'production';
    const scheduleS = ctx.config.WEBHOOK_RETRY_SCHEDULE_S.split(',').map(Number);
    if (scheduleS.some((n) => !(n >= 0)))
      throw new Error('WEBHOOK_RETRY_SCHEDULE_S must be comma-separated numbers of seconds');
    const dispatcher = new Dispatcher(
      deliveries,
      store,
      cache,
      new LeaseStore(leaseModel(ctx.db)),
      ctx.clock,
      ctx.log,
      {
        intervalMs: ctx.config.WEBHOOK_DISPATCH_INTERVAL_MS,
        timeoutMs: ctx.config.WEBHOOK_TIMEOUT_MS,
        scheduleS,
        policy: { httpsOnly: production, allowLoopback: !production && ctx.config.WEBHOOK_ALLOW_LOOPBACK },
        secretKey: Keyring.parse(ctx.config.WEBHOOK_SECRET_KEY, 'WEBHOOK_SECRET_KEY'),
        retentionDays: ctx.config.WEBHOOK_DELIVERY_RETENTION_DAYS,
        concurrency: ctx.config.WEBHOOK_ENDPOINT_CONCURRENCY,
      },
      ctx.outbox,
      ctx.metrics,
      ctx.tracing,
    );
    const deps = {
      ...endpointDeps(ctx, store, deliveries),
      sendNow: (d: DeliveryDoc[]) => dispatcher.offer(d),
      bodyChanged: (id: string) => dispatcher.bodyChanged(id),
    };
    ctx.grpc.add(WebhookServiceService, endpointHandlers(deps), webhookAccess);
    const fanout = new Fanout(
      ctx.bus,
      ctx.config.EVENTS_STREAM,
      cache,
      deliveries,
      ctx.clock,
      ctx.log,
      (d) => dispatcher.offer(d),
      ctx.tracing,
    );
    await fanout.start();
    dispatcher.start();
    if (!production && ctx.config.WEBHOOK_ALLOW_LOOPBACK)
      ctx.log.warn('webhook endpoints may point at loopback receivers (WEBHOOK_ALLOW_LOOPBACK, never in production)');
    return async () => {
      await fanout.stop();
      await dispatcher.stop();
    };
  },
  jobs: {
    // `npm run admin -- reseal --service webhook`: moves every endpoint secret to WEBHOOK_SECRET_KEY's current key.
    async reseal(ctx) {
      const keyring = Keyring.parse(ctx.config.WEBHOOK_SECRET_KEY, 'WEBHOOK_SECRET_KEY');
      const report = await resealEndpointSecrets(endpointModel(ctx.db), keyring, ctx.progress);
      return { key_id: keyring.currentId, ...report };
    },
  },
};

export const start = (opts?: StartOptions<WebhookConfig>) => startService(webhookService, opts);

if (require.main === module) runMain('webhook-service', () => start());
