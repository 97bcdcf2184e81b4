import { CheckoutServiceService, LicenseServiceClient, ProductServiceClient } from '@licensing/proto';
import { createClient, PeriodicTask, runMain, startService, type ServiceRecipe, type StartOptions } from '@licensing/runtime';
import { checkoutSchema, type CheckoutConfig } from './config';
import { checkoutHandlers } from './handlers/checkout-handlers';
import { CheckoutExpirySweeper } from './events/expiry-sweeper';
import { checkoutModels } from './store/models';
import { CheckoutStore } from './store/queries';
import { Completion } from './handlers/completion';
import { TestModeProvider } from './domain/payments';
import { checkoutPageApp, listen } from './web/server';

export const checkoutService: ServiceRecipe<typeof checkoutSchema> = {
  name: 'checkout',
  schema: checkoutSchema,
  async setup(ctx) {
    const store = new CheckoutStore(checkoutModels(ctx.db));
    const products = createClient(ProductServiceClient, ctx.config.PRODUCT_GRPC_ADDR, ctx.config.INTERNAL_TOKEN);
    const licenses = createClient(LicenseServiceClient, ctx.config.LICENSE_GRPC_ADDR, ctx.config.INTERNAL_TOKEN);
    const completion = new Completion(store, licenses.call, ctx.outbox, ctx.clock, ctx.log);
    const sweeper = new CheckoutExpirySweeper(store, ctx.outbox, ctx.clock, completion);
    const expiry = new PeriodicTask('checkout expiry sweep', () => sweeper.sweep(), ctx.config.EXPIRY_SWEEP_INTERVAL_MS, ctx.log);
    ctx.outbox.track(store.models.Session);
    ctx.grpc.add(CheckoutServiceService, checkoutHandlers(ctx, store, products.call));
    // The one payment provider today is the explicit test mode (docs/api.md, Checkout).
    const page = checkoutPageApp({ store, completion, provider: new TestModeProvider(), clock: ctx.clock, log: ctx.log, secureCookies: ctx.config.NODE_ENV === 'production' });
    const http = await listen(page, ctx.config.HTTP_HOST, ctx.config.HTTP_PORT);
    expiry.start();
    return async () => {
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await expiry.stop();
      products.close();
      licenses.close();
    };
  },
};

export const start = (opts?: StartOptions<CheckoutConfig>) => startService(checkoutService, opts);

if (require.main === module) runMain('checkout-service', () => start());
