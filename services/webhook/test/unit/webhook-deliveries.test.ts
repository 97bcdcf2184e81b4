import { endpointHandlers } from '../../src/handlers/endpoint-handlers';
import type { DeliveryDoc } from '../../src/store/deliveries';
import { createEndpoint } from '../../src/use-cases/create-endpoint';
import { retryDelivery, sendTestEvent } from '../../src/use-cases/deliveries';
import { listDeliveries } from '../../src/use-cases/read-endpoints';
import { refusal } from '../../../../test/support/fakes/common';
import { webhookSetup } from '../../../../test/support/fakes/webhook-deps';

async function setup() {
  const s = webhookSetup();
  const { endpoint } = await createEndpoint(s.deps, {
    account_id: 'acct_A',
    url: 'https://hooks.example.com/in',
    events: ['*'],
    description: '',
  });
  const delivery = (id: string, over: Partial<DeliveryDoc> = {}): DeliveryDoc => ({
    _id: id,
    account_id: 'acct_A',
    endpoint_id: endpoint._id,
    event_id: 'evt_1',
    event_type: 'license.created',
    body: '{}',
    status: 'failed',
    attempts: 8,
    next_attempt_at: null,
    last_status_code: 500,
    last_error: null,
    last_latency_ms: 12,
    created_at: new Date(0),
    delivered_at: null,
    ...over,
  });
  return { ...s, endpoint, delivery };
}

describe('webhook deliveries', () => {
  it('a retried failed delivery is pending again and due now', async () => {
    const { deliveries, clock, deps, endpoint, delivery } = await setup();
    await deliveries.record(delivery('dlv_1'));
    clock.advance(1000);
    const out = await retryDelivery(deps, 'acct_A', endpoint._id, 'dlv_1');
    expect(out).toMatchObject({ _id: 'dlv_1', status: 'pending', next_attempt_at: clock.now(), attempts: 8 });
    expect(deliveries.docs.get('dlv_1')).toMatchObject({ status: 'pending', next_attempt_at: clock.now() });
  });

  it('refuses to retry a delivery that succeeded', async () => {
    const { deliveries, deps, endpoint, delivery } = await setup();
    await deliveries.record(delivery('dlv_1', { status: 'delivered' }));
    expect(await refusal(() => retryDelivery(deps, 'acct_A', endpoint._id, 'dlv_1'))).toMatchObject({
      code: 'conflict',
      message: 'this delivery already succeeded',
    });
    expect(deliveries.docs.get('dlv_1')!.status).toBe('delivered');
  });

  it('refuses to retry on a disabled endpoint', async () => {
    const { endpoints, deliveries, deps, endpoint, delivery } = await setup();
    await deliveries.record(delivery('dlv_1'));
    await endpoints.update('acct_A', endpoint._id, { enabled: false });
    expect(await refusal(() => retryDelivery(deps, 'acct_A', endpoint._id, 'dlv_1'))).toMatchObject({
      code: 'conflict',
      message: 'the endpoint is disabled: enable it first',
    });
    expect(deliveries.docs.get('dlv_1')!.status).toBe('failed');
  });

  it("answers not found for a delivery of another endpoint, and for another account's endpoint", async () => {
    const { deliveries, deps, endpoint, delivery } = await setup();
    const { endpoint: second } = await createEndpoint(deps, {
      account_id: 'acct_A',
      url: 'https://hooks.example.com/2',
      events: ['*'],
      description: '',
    });
    await deliveries.record(delivery('dlv_1'));
    expect(await refusal(() => retryDelivery(deps, 'acct_A', second._id, 'dlv_1'))).toMatchObject({
      code: 'not_found',
      message: 'delivery not found',
    });
    expect(await refusal(() => retryDelivery(deps, 'acct_B', endpoint._id, 'dlv_1'))).toMatchObject({
      code: 'not_found',
      message: 'webhook endpoint not found',
    });
    expect(deliveries.docs.get('dlv_1')!.status).toBe('failed');
  });

  it('a test event is one pending delivery to this endpoint, due now, with a webhook.test body', async () => {
    const { deliveries, clock, deps, endpoint } = await setup();
    const d = await sendTestEvent(deps, 'acct_A', endpoint._id);
    expect(d).toMatchObject({
      account_id: 'acct_A',
      endpoint_id: endpoint._id,
      event_type: 'webhook.test',
      status: 'pending',
      attempts: 0,
      next_attempt_at: clock.now(),
      created_at: clock.now(),
    });
    expect(d._id).toBe(`dlv_${d.event_id.slice(4)}_${endpoint._id.slice(3)}`);
    expect(JSON.parse(d.body)).toEqual({
      id: d.event_id,
      type: 'webhook.test',
      created_at: clock.now().toISOString(),
      data: { endpoint: { id: endpoint._id } },
    });
    expect([...deliveries.docs.keys()]).toEqual([d._id]);
  });

  it("a test event to another account's endpoint is not found and records nothing", async () => {
    const { deliveries, deps, endpoint } = await setup();
    expect((await refusal(() => sendTestEvent(deps, 'acct_B', endpoint._id))).code).toBe('not_found');
    expect(deliveries.docs.size).toBe(0);
  });

  it("the delivery log lists only this endpoint's deliveries, newest first", async () => {
    const { deliveries, deps, endpoint, delivery } = await setup();
    await deliveries.record(delivery('dlv_1'));
    await deliveries.record(delivery('dlv_2'));
    await deliveries.record(delivery('dlv_3', { endpoint_id: 'we_other' }));
    const { items } = await listDeliveries(deps, 'acct_A', endpoint._id, undefined);
    expect(items.map((d) => d._id)).toEqual(['dlv_2', 'dlv_1']);
    expect((await refusal(() => listDeliveries(deps, 'acct_B', endpoint._id, undefined))).code).toBe('not_found');
  });

  it('the handlers answer deliveries in the contract, absent values as zero and empty', async () => {
    const { deliveries, deps, endpoint, delivery } = await setup();
    await deliveries.record(
      delivery('dlv_1', { last_status_code: null, last_latency_ms: null, last_error: 'connection refused' }),
    );
    const { data } = await endpointHandlers(deps).listDeliveries(
      { account_id: 'acct_A', endpoint_id: endpoint._id, page: undefined },
      { requestId: '', caller: 'gateway' as const, log: undefined as never },
    );
    expect(data).toEqual([
      {
        id: 'dlv_1',
        endpoint_id: endpoint._id,
        event_id: 'evt_1',
        event_type: 'license.created',
        status: 'failed',
        attempts: 8,
        last_status_code: 0,
        last_error: 'connection refused',
        last_latency_ms: 0,
        next_attempt_at: '',
        created_at: new Date(0).toISOString(),
        delivered_at: '',
      },
    ]);
  });
});
