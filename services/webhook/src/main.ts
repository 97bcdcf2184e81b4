import { WebhookServiceService } from '@licensing/proto';
import { runMain, startService, type ServiceRecipe, type StartOptions } from '@licensing/runtime';
import { webhookSchema, type WebhookConfig } from './config';
import { endpointHandlers } from './handlers/endpoint-handlers';
import { endpointModel } from './store/models';
import { EndpointStore } from './store/queries';

export const webhookService: ServiceRecipe<typeof webhookSchema> = {
  name: 'webhook',
  schema: webhookSchema,
  async setup(ctx) {
    const store = new EndpointStore(endpointModel(ctx.db));
    ctx.grpc.add(WebhookServiceService, endpointHandlers(ctx, store));
  },
};

export const start = (opts?: StartOptions<WebhookConfig>) => startService(webhookService, opts);

if (require.main === module) runMain('webhook-service', () => start());
