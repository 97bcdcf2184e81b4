import type { DomainEvent } from '@licensing/proto';
import type { EventBus, Logger } from '@licensing/runtime';
import { Fanout } from '../../src/events/fanout';
import type { DeliveryDoc } from '../../src/store/deliveries';
import { EndpointCache } from '../../src/store/endpoint-cache';
import { createEndpoint } from '../../src/use-cases/create-endpoint';
import { updateEndpoint } from '../../src/use-cases/change-endpoint';
import { webhookSetup } from '../../../../test/support/fakes/webhook-deps';

// The fan-out of a batch of events: one endpoint look-up per account (kept briefly), one insert for
// every delivery of the batch, and only the deliveries it added handed to the dispatcher.

let n = 0;
const event = (account: string, type = 'license.created'): DomainEvent =>
  ({
    id: `evt_${String(++n).padStart(4, '0')}`,
    type,
    account_id: account,
    created_at: '2026-03-01T12:00:00.000Z',
    data: { n },
  }) as unknown as DomainEvent;

async function setup(maxAgeMs = 1000) {
  const s = webhookSetup({ maxEndpoints: 5 });
  let nowMs = 0;
  const cache = new EndpointCache(s.endpoints, maxAgeMs, () => nowMs);
  s.endpoints.onWrite = (accountId) => cache.invalidate(accountId);
  const handed: DeliveryDoc[][] = [];
  const fanout = new Fanout(
    undefined as unknown as EventBus,
    'STREAM',
    cache,
    s.deliveries,
    s.clock,
    undefined as unknown as Logger,
    (d) => handed.push(d),
  );
  const endpoint = async (account: string, events: string[]) =>
    (
      await createEndpoint(s.deps, {
        account_id: account,
        url: 'https://hooks.example.com/in',
        events,
        description: '',
      })
    ).endpoint;
  return { ...s, cache, fanout, handed, endpoint, later: (ms: number) => (nowMs += ms) };
}

describe('webhook fan-out', () => {
  it("delivers no audit-only action (a password reset, an import started), even to an endpoint of every event: they are the audit log's", async () => {
    const { fanout, handed, endpoint } = await setup();
    await endpoint('acct_P', ['*']);
    expect(await fanout.fanOut([event('acct_P', 'password.reset'), event('acct_P', 'password.changed')])).toEqual([]);
    expect(await fanout.fanOut([event('acct_P', 'import.created'), event('acct_P', 'export.created')])).toEqual([]);
    expect(await fanout.fanOut([event('acct_P', 'license.created')])).toHaveLength(1);
    expect(handed.flat().map((d) => d.event_type)).toEqual(['license.created']);
  });

  it('a batch looks up each account once and records all its deliveries in one insert', async () => {
    const { fanout, endpoints, deliveries, handed, endpoint } = await setup();
    const all = await endpoint('acct_A', ['*']);
    const products = await endpoint('acct_A', ['product.created']);
    const theirs = await endpoint('acct_B', ['license.created']);
    endpoints.enabledAsked.length = 0;
    const batch = [event('acct_A'), event('acct_A', 'product.created'), event('acct_B'), event('acct_C')];
    const added = await fanout.fanOut(batch);
    expect(endpoints.enabledAsked.sort()).toEqual(['acct_A', 'acct_B', 'acct_C']);
    expect(deliveries.inserts).toEqual([4]);
    expect(added.map((d) => [d.event_id, d.endpoint_id]).sort()).toEqual(
      [
        [batch[0].id, all._id],
        [batch[1].id, all._id],
        [batch[1].id, products._id],
        [batch[2].id, theirs._id],
      ].sort(),
    );
    expect(added.every((d) => d.status === 'pending' && d.attempts === 0)).toBe(true);
    expect(handed).toEqual([added]);
  });

  it('an event twice in a batch, or arriving again later, is recorded and handed over once', async () => {
    const { fanout, deliveries, handed, endpoint } = await setup();
    await endpoint('acct_A', ['*']);
    const [first, second] = [event('acct_A'), event('acct_A')];
    expect(await fanout.fanOut([first, first, second])).toHaveLength(2);
    // Redelivered (say, acknowledged too late) together with a new one: only the new one is added.
    const third = event('acct_A');
    const again = await fanout.fanOut([second, first, third]);
    expect(again.map((d) => d.event_id)).toEqual([third.id]);
    expect(await fanout.fanOut([third])).toEqual([]);
    expect(deliveries.docs.size).toBe(3);
    expect(handed.flat().map((d) => d.event_id)).toEqual([first.id, second.id, third.id]);
  });

  it('keeps an account’s endpoints for a moment, and forgets them when this instance changes one', async () => {
    const { fanout, endpoints, deps, endpoint, later } = await setup(1000);
    const e = await endpoint('acct_A', ['*']);
    await fanout.fanOut([event('acct_A')]);
    await fanout.fanOut([event('acct_A')]);
    expect(endpoints.enabledAsked.filter((a) => a === 'acct_A')).toHaveLength(1);
    // Disabled here: the next event sees it at once.
    await updateEndpoint(deps, { account_id: 'acct_A', id: e._id, events: [], enabled: false });
    expect(await fanout.fanOut([event('acct_A')])).toEqual([]);
    expect(endpoints.enabledAsked.filter((a) => a === 'acct_A')).toHaveLength(2);
    // Changed by another replica (straight in the store): seen once the entry is a second old.
    endpoints.docs.get(e._id)!.enabled = true;
    expect(await fanout.fanOut([event('acct_A')])).toEqual([]);
    later(1000);
    expect(await fanout.fanOut([event('acct_A')])).toHaveLength(1);
  });

  it('does not keep an answer read while this instance was changing the account’s endpoints', async () => {
    const { endpoints, cache, endpoint } = await setup(60_000);
    const e = await endpoint('acct_A', ['*']);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const read = endpoints.enabledOf.bind(endpoints);
    endpoints.enabledOf = async (a) => {
      const answer = await read(a); // the answer from before the change...
      await gate;
      return answer;
    };
    const stale = cache.enabledOf('acct_A');
    cache.invalidate('acct_A'); // ...which lands after this instance's write
    release();
    expect(await stale).toHaveLength(1);
    endpoints.enabledOf = read;
    endpoints.docs.get(e._id)!.enabled = false;
    expect(await cache.enabledOf('acct_A')).toEqual([]);
  });
});
