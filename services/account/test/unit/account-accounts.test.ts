import { digestApiKey, parseApiKey } from '../../src/domain/api-key';
import { createAccount, findAccount, updateAccount } from '../../src/use-cases/accounts';
import { accountSetup, PEPPER } from '../../../../test/support/fakes/account-deps';
import { refusal } from '../../../../test/support/fakes/common';

describe('creating an account', () => {
  it('stores the account with its first full-scope key "default" by the operator, kept only as a digest', async () => {
    const { store, clock, outbox, deps } = accountSetup();
    const { account, key, secret } = await createAccount(deps, { name: ' Acme ', plan: '' });
    expect(account).toMatchObject({ name: 'Acme', plan: 'free', per_minute_limit: null, created_at: clock.now() });
    expect(store.accounts.get(account._id)).toEqual(account);
    expect(parseApiKey(secret)).toEqual({ scope: 'full' });
    expect(key).toMatchObject({ account_id: account._id, scope: 'full', name: 'default', created_by: 'operator' });
    expect(store.keys.get(key._id)?.digest).toBe(digestApiKey(secret, PEPPER));
    expect(JSON.stringify([...store.keys.values()])).not.toContain(secret);
    expect(store.events.map((e) => e.type)).toEqual(['api_key.created']);
    expect(outbox.flushed).toEqual([{ model: 'ApiKey', id: key._id }]);
  });

  it.each([
    ['an empty name', { name: '  ', plan: '' }, 'name'],
    ['an unknown plan', { name: 'Acme', plan: 'gold' }, 'plan'],
  ])('refuses %s, storing nothing', async (_what, req, field) => {
    const { store, deps } = accountSetup();
    const err = await refusal(() => createAccount(deps, req));
    expect(err.fieldErrors.map((f) => f.field)).toEqual([field]);
    expect(store.accounts.size).toBe(0);
    expect(store.keys.size).toBe(0);
  });

  it('finds an account by id, and answers an unknown one as not found', async () => {
    const { deps } = accountSetup();
    const { account } = await createAccount(deps, { name: 'Acme', plan: 'pro' });
    expect(await findAccount(deps, account._id)).toEqual(account);
    expect(await refusal(() => findAccount(deps, 'acct_nope'))).toMatchObject({
      code: 'not_found',
      message: 'account not found',
    });
  });
});

describe('updating an account', () => {
  async function setup() {
    const s = accountSetup();
    const { account } = await createAccount(s.deps, { name: 'Acme', plan: 'free' });
    s.store.events.length = 0;
    s.outbox.flushed.length = 0;
    return { ...s, account };
  }

  it('changes the plan and limits with account.updated, then hands it to the outbox', async () => {
    const { store, outbox, deps, account } = await setup();
    const updated = await updateAccount(deps, { id: account._id, plan: 'pro', per_minute_limit: 600 });
    expect(updated).toMatchObject({ plan: 'pro', per_minute_limit: 600, per_hour_limit: null });
    expect(store.events).toHaveLength(1);
    expect(store.events[0]).toMatchObject({
      type: 'account.updated',
      account_id: account._id,
      data: { account: { plan: 'pro', per_minute_limit: 600 } },
    });
    expect(outbox.flushed).toEqual([{ model: 'Account', id: account._id }]);
  });

  it('removes an override with 0 (back to the plan default)', async () => {
    const { deps, account } = await setup();
    await updateAccount(deps, { id: account._id, per_hour_limit: 5000 });
    expect((await updateAccount(deps, { id: account._id, per_hour_limit: 0 })).per_hour_limit).toBeNull();
  });

  it.each([
    ['nothing to change', {}, undefined],
    ['a negative limit', { per_minute_limit: -1 }, 'per_minute_limit'],
    ['a fractional limit', { per_hour_limit: 1.5 }, 'per_hour_limit'],
    ['an unknown plan', { plan: 'gold' }, 'plan'],
  ])('refuses %s, writing nothing', async (_what, over, field) => {
    const { store, outbox, deps, account } = await setup();
    const err = await refusal(() => updateAccount(deps, { id: account._id, ...over }));
    expect(err.code).toBe('invalid_request');
    if (field) expect(err.fieldErrors.map((f) => f.field)).toEqual([field]);
    expect(store.events).toEqual([]);
    expect(outbox.flushed).toEqual([]);
  });

  it('answers an unknown account as not found, flushing nothing', async () => {
    const { outbox, deps } = await setup();
    expect((await refusal(() => updateAccount(deps, { id: 'acct_nope', plan: 'pro' }))).code).toBe('not_found');
    expect(outbox.flushed).toEqual([]);
  });
});
