import { AccountServiceService } from '@licensing/proto';
import { runMain, startService, type ServiceRecipe, type StartOptions } from '@licensing/runtime';
import { accountSchema, type AccountConfig } from './config';
import { accountHandlers } from './handlers/account-handlers';
import { accountModels } from './store/models';
import { AccountStore } from './store/queries';

export const accountService: ServiceRecipe<typeof accountSchema> = {
  name: 'account',
  schema: accountSchema,
  async setup(ctx) {
    const store = new AccountStore(accountModels(ctx.db));
    ctx.outbox.track(store.models.ApiKey);
    ctx.outbox.track(store.models.Account);
    ctx.grpc.add(AccountServiceService, accountHandlers(ctx, store));
  },
};

export const start = (opts?: StartOptions<AccountConfig>) => startService(accountService, opts);

if (require.main === module) runMain('account-service', () => start());
