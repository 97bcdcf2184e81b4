import { CheckoutServiceService, ProductServiceClient } from '@licensing/proto';
import { createClient, runMain, startService, type ServiceRecipe, type StartOptions } from '@licensing/runtime';
import { checkoutSchema, type CheckoutConfig } from './config';
import { checkoutHandlers } from './handlers/checkout-handlers';
import { CheckoutExpirySweeper } from './events/expiry-sweeper';
import { checkoutModels } from './store/models';
import { CheckoutStore } from './store/queries';

export const checkoutService: ServiceRecipe<typeof checkoutSchema> = {
  name: 'checkout',
  schema: checkoutSchema,
  async setup(ctx) {
    const store = new CheckoutStore(checkoutModels(ctx.db));
    const products = createClient(ProductServiceClient, ctx.config.PRODUCT_GRPC_ADDR, ctx.config.INTERNAL_TOKEN);
    const sweeper = new CheckoutExpirySweeper(store, ctx.outbox, ctx.clock, ctx.log, ctx.config.EXPIRY_SWEEP_INTERVAL_MS);
    ctx.outbox.track(store.models.Session);
    ctx.grpc.add(CheckoutServiceService, checkoutHandlers(ctx, store, products.call));
    sweeper.start();
    return async () => {
      await sweeper.stop();
      products.close();
    };
  },
};

export const start = (opts?: StartOptions<CheckoutConfig>) => startService(checkoutService, opts);

if (require.main === module) runMain('checkout-service', () => start());
