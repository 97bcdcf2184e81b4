import { REFUSED_ADDRESS } from '../../src/domain/ssrf';
import { endpointHandlers } from '../../src/handlers/endpoint-handlers';
import { deleteEndpoint } from '../../src/use-cases/change-endpoint';
import { createEndpoint } from '../../src/use-cases/create-endpoint';
import { refusal } from '../../../../test/support/fakes/common';
import { webhookSetup } from '../../../../test/support/fakes/webhook-deps';

const request = (over: Record<string, unknown> = {}) => ({
  account_id: 'acct_A',
  url: 'https://hooks.example.com/in',
  events: ['license.created'],
  description: '',
  ...over,
});

describe('creating a webhook endpoint', () => {
  it('stores an enabled endpoint of the account with its checked URL, events and description', async () => {
    const { endpoints, clock, deps } = webhookSetup();
    const { endpoint } = await createEndpoint(
      deps,
      request({
        url: '  https://hooks.example.com/in  ',
        events: ['license.created', 'license.created', 'product.created'],
        description: ' ours ',
      }),
    );
    expect(endpoint).toMatchObject({
      account_id: 'acct_A',
      url: 'https://hooks.example.com/in',
      events: ['license.created', 'product.created'],
      description: 'ours',
      enabled: true,
      failing_since: null,
      deleted_at: null,
      created_at: clock.now(),
    });
    expect(endpoint._id).toMatch(/^we_/);
    expect(endpoints.docs.get(endpoint._id)).toEqual(endpoint);
  });

  it('stores it disabled when asked (an import bringing a disabled endpoint across)', async () => {
    const { deps } = webhookSetup();
    expect((await createEndpoint(deps, request({ enabled: false }))).endpoint.enabled).toBe(false);
    expect((await createEndpoint(deps, request({ enabled: true }))).endpoint.enabled).toBe(true);
  });

  it('answers a new whsec_ secret once and stores it only sealed', async () => {
    const { deps } = webhookSetup();
    const { endpoint, secret } = await createEndpoint(deps, request());
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(endpoint.secrets).toHaveLength(1);
    expect(endpoint.secrets[0].sealed).not.toContain(secret.slice(6));
    expect(deps.secretKey.open(endpoint.secrets[0].sealed).toString()).toBe(secret);
    expect(endpoint.secrets[0].expires_at).toBeNull();
  });

  it.each([
    ['a relative URL', { url: '/hooks' }, 'url must be an absolute URL'],
    ['plain http where https is required', { url: 'http://hooks.example.com/in' }, 'url must use https'],
    ['credentials in the URL', { url: 'https://u:p@hooks.example.com/in' }, 'url must not contain credentials'],
    [
      'a host that does not resolve',
      { url: 'https://nowhere.example.com/in' },
      'url host "nowhere.example.com" does not resolve',
    ],
    ['a name that resolves inside the network', { url: 'https://inside.example.com/in' }, `url ${REFUSED_ADDRESS}`],
    ['a private address', { url: 'https://192.168.1.10/in' }, `url ${REFUSED_ADDRESS}`],
    ['no events', { events: [] }, 'events must list at least one event type, or ["*"] for all'],
    [
      '"*" with another event',
      { events: ['*', 'license.created'] },
      '"*" already means every event; list nothing else with it',
    ],
    [
      'a description over 500 characters',
      { description: 'x'.repeat(501) },
      'description must be at most 500 characters',
    ],
  ])('refuses %s, storing nothing', async (_what, over, message) => {
    const { endpoints, deps } = webhookSetup();
    const err = await refusal(() => createEndpoint(deps, request(over)));
    expect(err).toMatchObject({ code: 'invalid_request', message });
    expect(endpoints.docs.size).toBe(0);
  });

  it('refuses an unknown event type, naming it', async () => {
    const { deps } = webhookSetup();
    const err = await refusal(() => createEndpoint(deps, request({ events: ['license.created', 'license.exploded'] })));
    expect(err.message).toContain('unknown event type(s) license.exploded');
  });

  it('lets a development setting allow loopback receivers over http', async () => {
    const { deps } = webhookSetup({ urlPolicy: { httpsOnly: false, allowLoopback: true } });
    expect((await createEndpoint(deps, request({ url: 'http://127.0.0.1:9999/in' }))).endpoint.url).toBe(
      'http://127.0.0.1:9999/in',
    );
  });

  it("refuses one more endpoint than the cap, and counts only the account's live ones", async () => {
    const { endpoints, deps } = webhookSetup({ maxEndpoints: 2 });
    await createEndpoint(deps, request());
    await createEndpoint(deps, request({ account_id: 'acct_B' }));
    const second = await createEndpoint(deps, request());
    const err = await refusal(() => createEndpoint(deps, request()));
    expect(err).toMatchObject({
      code: 'conflict',
      message: 'this account already has 2 webhook endpoints, the most it may have; delete one first',
    });
    await deleteEndpoint(deps, 'acct_A', second.endpoint._id);
    await expect(createEndpoint(deps, request())).resolves.toMatchObject({ endpoint: { account_id: 'acct_A' } });
    expect(await endpoints.countOf('acct_A')).toBe(2);
  });

  it('answers conflict (try again) when every slot race is lost', async () => {
    const { endpoints, deps } = webhookSetup();
    endpoints.contended = true;
    const err = await refusal(() => createEndpoint(deps, request()));
    expect(err).toMatchObject({ code: 'conflict', message: expect.stringContaining('try again') });
  });

  it('the handler answers the endpoint in the contract with its secret', async () => {
    const { clock, deps } = webhookSetup();
    const out = await endpointHandlers(deps).createEndpoint(request({ events: ['*'] }), {
      requestId: '',
      caller: 'gateway' as const,
      log: undefined as never,
    });
    expect(out).toEqual({
      endpoint: {
        id: expect.stringMatching(/^we_/),
        account_id: 'acct_A',
        url: 'https://hooks.example.com/in',
        events: ['*'],
        description: '',
        enabled: true,
        created_at: clock.now().toISOString(),
      },
      secret: expect.stringMatching(/^whsec_/),
    });
  });
});
