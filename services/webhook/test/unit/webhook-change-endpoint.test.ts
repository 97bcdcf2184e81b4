import { newId } from '@licensing/runtime';
import { SECRET_OVERLAP_MS, liveSecrets } from '../../src/domain/endpoint';
import { endpointHandlers } from '../../src/handlers/endpoint-handlers';
import { deleteEndpoint, updateEndpoint } from '../../src/use-cases/change-endpoint';
import { createEndpoint } from '../../src/use-cases/create-endpoint';
import { findEndpoint } from '../../src/use-cases/read-endpoints';
import { rotateSecret } from '../../src/use-cases/rotate-secret';
import { refusal } from '../../../../test/support/fakes/common';
import { webhookSetup } from '../../../../test/support/fakes/webhook-deps';

async function setup() {
  const s = webhookSetup();
  const { endpoint, secret } = await createEndpoint(s.deps, {
    account_id: 'acct_A',
    url: 'https://hooks.example.com/in',
    events: ['license.created'],
    description: 'ours',
  });
  return { ...s, endpoint, secret };
}

const change = (id: string, over: Record<string, unknown> = {}) => ({
  account_id: 'acct_A',
  id,
  events: [] as string[],
  ...over,
});

describe('changing a webhook endpoint', () => {
  it('changes only what is given and answers the endpoint after the change', async () => {
    const { endpoints, deps, endpoint } = await setup();
    const after = await updateEndpoint(deps, change(endpoint._id, { events: ['*'], enabled: false }));
    expect(after).toMatchObject({
      url: 'https://hooks.example.com/in',
      description: 'ours',
      events: ['*'],
      enabled: false,
    });
    expect(endpoints.updates).toEqual([
      { accountId: 'acct_A', id: endpoint._id, changes: { events: ['*'], enabled: false } },
    ]);
  });

  it('checks a new URL as creation does', async () => {
    const { endpoints, deps, endpoint } = await setup();
    const err = await refusal(() =>
      updateEndpoint(deps, change(endpoint._id, { url: 'https://inside.example.com/x' })),
    );
    expect(err.code).toBe('invalid_request');
    expect(err.fieldErrors[0].field).toBe('url');
    expect(endpoints.updates).toEqual([]);
  });

  it('lets the description be emptied (an empty string is a change)', async () => {
    const { deps, endpoint } = await setup();
    expect((await updateEndpoint(deps, change(endpoint._id, { description: '' }))).description).toBe('');
  });

  it('refuses a change with nothing in it', async () => {
    const { endpoints, deps, endpoint } = await setup();
    expect(await refusal(() => updateEndpoint(deps, change(endpoint._id)))).toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('nothing to change'),
    });
    expect(endpoints.updates).toEqual([]);
  });

  it.each([
    ['a malformed id', 'acct_A', 'we_nope'],
    ['an id that does not exist', 'acct_A', newId('we')],
    ['another account', 'acct_B', ''],
  ])('answers not found for %s, and writes nothing', async (_what, accountId, id) => {
    const { endpoints, deps, endpoint } = await setup();
    const target = id || endpoint._id;
    for (const call of [
      () => updateEndpoint(deps, { ...change(target, { enabled: false }), account_id: accountId }),
      () => deleteEndpoint(deps, accountId, target),
      () => rotateSecret(deps, accountId, target),
    ]) {
      expect(await refusal(call)).toMatchObject({ code: 'not_found', message: 'webhook endpoint not found' });
    }
    expect(endpoints.updates).toEqual([]);
  });

  it('deleting marks it deleted at the clock time, frees its slot, and it is then not found', async () => {
    const { endpoints, clock, deps, endpoint } = await setup();
    clock.advance(5000);
    const answered = await deleteEndpoint(deps, 'acct_A', endpoint._id);
    expect(answered).toMatchObject({ _id: endpoint._id, enabled: false });
    expect(endpoints.docs.get(endpoint._id)).toMatchObject({
      deleted_at: clock.now(),
      enabled: false,
      slot_key: `freed:${endpoint._id}`,
    });
    expect((await refusal(() => findEndpoint(endpoints, 'acct_A', endpoint._id))).code).toBe('not_found');
  });

  it('rotating answers a new secret and keeps the previous one signing for 24 hours', async () => {
    const { endpoints, clock, deps, endpoint, secret } = await setup();
    clock.advance(60_000);
    const rotated = await rotateSecret(deps, 'acct_A', endpoint._id);
    expect(rotated.secret).not.toBe(secret);
    const [fresh, previous] = endpoints.docs.get(endpoint._id)!.secrets;
    expect(deps.secretKey.open(fresh.sealed).toString()).toBe(rotated.secret);
    expect(fresh).toMatchObject({ created_at: clock.now(), expires_at: null });
    expect(deps.secretKey.open(previous.sealed).toString()).toBe(secret);
    expect(previous.expires_at).toEqual(new Date(clock.now().getTime() + SECRET_OVERLAP_MS));
  });

  it('after three rotations only the newest two secrets are kept and sign, and after the overlap only the newest', async () => {
    const { endpoints, clock, deps, endpoint, secret } = await setup();
    const made = [secret];
    for (let i = 0; i < 3; i++) {
      clock.advance(3600_000); // each within the previous one's 24 hours
      made.push((await rotateSecret(deps, 'acct_A', endpoint._id)).secret);
    }
    const stored = endpoints.docs.get(endpoint._id)!.secrets;
    expect(stored.map((s) => deps.secretKey.open(s.sealed).toString())).toEqual([made[3], made[2]]);
    expect(stored.map((s) => s.expires_at)).toEqual([null, new Date(clock.now().getTime() + SECRET_OVERLAP_MS)]);
    const signing = (at: Date) => liveSecrets(stored, at).map((s) => deps.secretKey.open(s.sealed).toString());
    expect(signing(clock.now())).toEqual([made[3], made[2]]);
    expect(signing(new Date(clock.now().getTime() + SECRET_OVERLAP_MS - 1))).toEqual([made[3], made[2]]);
    expect(signing(new Date(clock.now().getTime() + SECRET_OVERLAP_MS))).toEqual([made[3]]);
  });

  it('an endpoint stored with more live secrets signs with the newest two only', () => {
    const at = (h: number) => new Date(Date.UTC(2026, 2, 1, h));
    const secret = (name: string, expires: Date | null) => ({ sealed: name, created_at: at(0), expires_at: expires });
    const stored = [secret('newest', null), secret('second', at(30)), secret('third', at(29)), secret('gone', at(1))];
    expect(liveSecrets(stored, at(2)).map((s) => s.sealed)).toEqual(['newest', 'second']);
  });

  it('the handlers answer get, update and delete in the contract', async () => {
    const { deps, endpoint } = await setup();
    const h = endpointHandlers(deps);
    const ctx = { requestId: '', caller: 'gateway' as const, log: undefined as never };
    expect(await h.getEndpoint({ account_id: 'acct_A', id: endpoint._id }, ctx)).toEqual({
      id: endpoint._id,
      account_id: 'acct_A',
      url: endpoint.url,
      events: ['license.created'],
      description: 'ours',
      enabled: true,
      created_at: endpoint.created_at.toISOString(),
    });
    expect(
      (await h.updateEndpoint({ account_id: 'acct_A', id: endpoint._id, events: [], enabled: false }, ctx)).enabled,
    ).toBe(false);
    expect((await h.rotateSecret({ account_id: 'acct_A', id: endpoint._id }, ctx)).secret).toMatch(/^whsec_/);
    expect((await h.deleteEndpoint({ account_id: 'acct_A', id: endpoint._id }, ctx)).id).toBe(endpoint._id);
    const { data } = await h.listEndpoints({ account_id: 'acct_A', page: undefined }, ctx);
    expect(data).toEqual([]);
  });
});
