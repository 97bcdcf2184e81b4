import type { EventBus } from '@licensing/runtime';
import { FakeBus } from '../../../../test/support/fakes/common';

// EventBus.subscribe and follow hand each handler the payload of the types it asked for, so no
// consumer casts an event. The type checker (tsc, run by npm test) holds the typing: the lines
// marked @ts-expect-error must stay errors, the others must compile. The fake bus has the real
// bus's signatures (it is passed where a Pick<EventBus, …> is expected), so this also runs them.

type Consumer = Pick<EventBus, 'subscribe' | 'follow'>;

function listen(bus: Consumer, heard: string[]): void {
  bus.subscribe('api_key.revoked', (event) => heard.push(`revoked ${event.data.api_key.id}`));
  bus.subscribe('account.updated', (event) => heard.push(`plan ${event.data.account.plan}`));
  bus.follow(['license.>', 'product.updated'], (event) => {
    if (event.type === 'product.updated') heard.push(`product ${event.data.product.id}`);
    else if (event.type === 'license.batch_completed') heard.push(`${event.type} ${event.data.batch.id}`);
    else heard.push(`${event.type} ${event.data.license.key}`);
  });
}

describe('typed event handlers', () => {
  it('each handler gets the payload of the type it subscribed to or follows', () => {
    const bus = new FakeBus();
    const heard: string[] = [];
    listen(bus, heard);
    bus.emit('api_key.revoked', 'acct_1', { api_key: { id: 'key_1' } });
    bus.emit('account.updated', 'acct_1', { account: { plan: 'pro' } });
    bus.emit('license.revoked', 'acct_1', { license: { key: 'K-1' } });
    bus.emit('product.updated', 'acct_1', { product: { id: 'prod_1' } });
    bus.emit('checkout.completed', 'acct_1', { checkout: { id: 'cs_1' } }); // nobody listens
    expect(heard).toEqual(['revoked key_1', 'plan pro', 'license.revoked K-1', 'product prod_1']);
  });

  it("a handler hears only what it named; naming anything else, or reading another type's data, does not compile", () => {
    const bus: Consumer & FakeBus = new FakeBus();
    const heard: string[] = [];
    // @ts-expect-error: webhook.test is delivered to one endpoint, never published on the bus
    bus.subscribe('webhook.test', () => heard.push('webhook.test'));
    // @ts-expect-error: a pattern names a family that exists
    bus.follow(['licence.>'], () => heard.push('licence.>'));
    bus.subscribe('api_key.revoked', (event) => {
      // @ts-expect-error: an api_key event carries no account object
      heard.push(`account ${event.data.account}`);
    });
    bus.follow(['license.>'], (event) => {
      // @ts-expect-error: a licence event carries no product object
      heard.push(`product ${event.data.product}`);
    });
    bus.emit('webhook.disabled', 'acct_1', { endpoint: { id: 'we_1', url: 'https://example.com' }, reason: 'failing' });
    bus.emit('product.updated', 'acct_1', { product: { id: 'prod_1' } });
    bus.emit('api_key.created', 'acct_1', { api_key: { id: 'key_1' } });
    expect(heard).toEqual([]);
  });
});
