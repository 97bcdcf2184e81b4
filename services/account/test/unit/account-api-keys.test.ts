import { LAST_USED_RESOLUTION_MS } from '../../src/domain/account';
import { createAccount } from '../../src/use-cases/accounts';
import { MAX_LIVE_KEYS } from '../../src/domain/api-key';
import {
  createApiKey,
  getApiKey,
  listApiKeys,
  regenerateApiKey,
  revokeAllApiKeys,
  revokeApiKey,
} from '../../src/use-cases/api-keys';
import { authenticate } from '../../src/use-cases/authenticate';
import { accountSetup } from '../../../../test/support/fakes/account-deps';
import { refusal } from '../../../../test/support/fakes/common';

async function setup() {
  const s = accountSetup();
  const a = await createAccount(s.deps, { name: 'Acme', plan: 'free' });
  const b = await createAccount(s.deps, { name: 'Other', plan: 'free' });
  s.store.events.length = 0;
  s.outbox.flushed.length = 0;
  return { ...s, a, b, accountId: a.account._id };
}

describe('creating API keys', () => {
  it('issues a key of the asked scope and name, created by the actor, with api_key.created', async () => {
    const { store, outbox, deps, accountId } = await setup();
    const { key, secret } = await createApiKey(deps, {
      account_id: accountId,
      scope: 'validate',
      name: ' app ',
      actor: 'ana@example.com',
    });
    expect(secret).toMatch(/^lk_val_/);
    expect(key).toMatchObject({ account_id: accountId, scope: 'validate', name: 'app', created_by: 'ana@example.com' });
    expect(key.prefix).toBe(secret.slice(0, 'lk_val_'.length + 4));
    expect(store.events).toHaveLength(1);
    expect(store.events[0]).toMatchObject({ type: 'api_key.created', data: { api_key: { actor: 'ana@example.com' } } });
    expect(outbox.flushed).toEqual([{ model: 'ApiKey', id: key._id }]);
  });

  it.each([
    ['an unknown scope', { scope: 'admin' }, 'invalid_request'],
    ['a name over 100 characters', { name: 'n'.repeat(101) }, 'invalid_request'],
    ['an unknown account', { account_id: 'acct_nope' }, 'not_found'],
  ])('refuses %s, storing nothing', async (_what, over, code) => {
    const { store, deps, accountId } = await setup();
    const before = store.keys.size;
    const err = await refusal(() => createApiKey(deps, { account_id: accountId, scope: 'full', name: 'x', ...over }));
    expect(err.code).toBe(code);
    expect(store.keys.size).toBe(before);
  });

  it('lists only the account’s keys', async () => {
    const { deps, a, b } = await setup();
    const { items } = await listApiKeys(deps, b.account._id, undefined);
    expect(items.map((k) => k._id)).toEqual([b.key._id]);
    expect(items.map((k) => k._id)).not.toContain(a.key._id);
  });
});

describe('revoking API keys', () => {
  it('revokes with who did it and api_key.revoked, then hands it to the outbox', async () => {
    const { store, outbox, clock, deps, a, accountId } = await setup();
    const revoked = await revokeApiKey(deps, { account_id: accountId, key_id: a.key._id, actor: 'ana@example.com' });
    expect(revoked).toMatchObject({ revoked_at: clock.now(), revoked_by: 'ana@example.com' });
    expect(store.events.map((e) => e.type)).toEqual(['api_key.revoked']);
    expect(outbox.flushed).toEqual([{ model: 'ApiKey', id: a.key._id }]);
  });

  it('answers a second revocation with the key as it is, publishing nothing more', async () => {
    const { store, outbox, clock, deps, a, accountId } = await setup();
    await revokeApiKey(deps, { account_id: accountId, key_id: a.key._id });
    const first = store.keys.get(a.key._id)!.revoked_at;
    clock.advance(60_000);
    const again = await revokeApiKey(deps, { account_id: accountId, key_id: a.key._id });
    expect(again.revoked_at).toEqual(first);
    expect(again.revoked_by).toBe('operator');
    expect(store.events).toHaveLength(1);
    expect(outbox.flushed).toHaveLength(1);
  });

  it("answers another account's key as not found, leaving it live", async () => {
    const { store, deps, b, accountId } = await setup();
    const err = await refusal(() => revokeApiKey(deps, { account_id: accountId, key_id: b.key._id }));
    expect(err).toMatchObject({ code: 'not_found', message: 'API key not found' });
    expect(store.keys.get(b.key._id)?.revoked_at).toBeNull();
  });

  it('refuses a revocation without an account id', async () => {
    const { deps, a } = await setup();
    const err = await refusal(() => revokeApiKey(deps, { account_id: '', key_id: a.key._id }));
    expect(err.fieldErrors.map((f) => f.field)).toEqual(['account_id']);
  });

  it('regenerates: a new key with the same scope and name first, then the old one revoked', async () => {
    const { store, outbox, deps, a, accountId } = await setup();
    const fresh = await regenerateApiKey(deps, { account_id: accountId, key_id: a.key._id, actor: 'ana@example.com' });
    expect(fresh.key).toMatchObject({ scope: 'full', name: 'default', created_by: 'ana@example.com' });
    expect(fresh.key._id).not.toBe(a.key._id);
    expect(store.keys.get(a.key._id)?.revoked_by).toBe('ana@example.com');
    expect(store.events.map((e) => e.type)).toEqual(['api_key.created', 'api_key.revoked']);
    expect(outbox.flushed.map((f) => f.id)).toEqual([fresh.key._id, a.key._id]);
  });

  it('refuses to regenerate a revoked key, and answers another account’s as not found', async () => {
    const { store, deps, a, b, accountId } = await setup();
    await revokeApiKey(deps, { account_id: accountId, key_id: a.key._id });
    const keys = store.keys.size;
    expect((await refusal(() => regenerateApiKey(deps, { account_id: accountId, key_id: a.key._id }))).code).toBe(
      'conflict',
    );
    expect((await refusal(() => regenerateApiKey(deps, { account_id: accountId, key_id: b.key._id }))).code).toBe(
      'not_found',
    );
    expect(store.keys.size).toBe(keys);
  });
});

describe('the cap on live keys', () => {
  /** Fills the account up to the cap (it starts with its default key). */
  async function full() {
    const s = await setup();
    for (let i = 1; i < MAX_LIVE_KEYS; i++)
      await createApiKey(s.deps, { account_id: s.accountId, scope: 'full', name: `k${i}` });
    return s;
  }

  it(`is ${MAX_LIVE_KEYS} live keys: one more is a conflict that says so, and stores and publishes nothing`, async () => {
    const { store, deps, accountId } = await full();
    const events = store.events.length;
    const err = await refusal(() => createApiKey(deps, { account_id: accountId, scope: 'full', name: 'one too many' }));
    expect(err).toMatchObject({
      code: 'conflict',
      message: `this account already has ${MAX_LIVE_KEYS} live API keys, the most it may have; revoke one it no longer needs first`,
    });
    expect(await store.countLiveKeys(accountId)).toBe(MAX_LIVE_KEYS);
    expect(store.events).toHaveLength(events);
  });

  it('counts live keys only: a revoked key makes room, and another account is not affected', async () => {
    const { deps, a, b, accountId } = await full();
    await revokeApiKey(deps, { account_id: accountId, key_id: a.key._id });
    await expect(createApiKey(deps, { account_id: accountId, scope: 'full', name: 'room' })).resolves.toBeDefined();
    await expect(
      createApiKey(deps, { account_id: b.account._id, scope: 'full', name: 'other' }),
    ).resolves.toBeDefined();
  });

  it('still lets a full account regenerate a key (the new one takes the old one’s place)', async () => {
    const { store, deps, a, accountId } = await full();
    const fresh = await regenerateApiKey(deps, { account_id: accountId, key_id: a.key._id });
    expect(fresh.key.scope).toBe('full');
    expect(await store.countLiveKeys(accountId)).toBe(MAX_LIVE_KEYS);
  });
});

describe('finding, listing and revoking every key', () => {
  it('finds a key by its id within its account, however many keys came after it', async () => {
    const { deps, a, b, accountId } = await setup();
    for (let i = 0; i < 120; i++) {
      const k = await createApiKey(deps, { account_id: accountId, scope: 'full', name: `churn ${i}` });
      await revokeApiKey(deps, { account_id: accountId, key_id: k.key._id });
    }
    expect(await getApiKey(deps, { account_id: accountId, key_id: a.key._id })).toMatchObject({ name: 'default' });
    for (const req of [
      { account_id: accountId, key_id: b.key._id },
      { account_id: accountId, key_id: 'not-a-key' },
    ])
      expect(await refusal(() => getApiKey(deps, req))).toMatchObject({ code: 'not_found' });
    expect((await refusal(() => getApiKey(deps, { account_id: '', key_id: a.key._id }))).code).toBe('invalid_request');
  });

  it('lists live keys, and revoked ones apart, with the live count and the cap', async () => {
    const { deps, a, accountId } = await setup();
    const app = await createApiKey(deps, { account_id: accountId, scope: 'validate', name: 'app' });
    await revokeApiKey(deps, { account_id: accountId, key_id: a.key._id });
    const live = await listApiKeys(deps, accountId, undefined);
    expect(live.items.map((k) => k._id)).toEqual([app.key._id]);
    expect(live).toMatchObject({ live: 1, max: MAX_LIVE_KEYS });
    expect((await listApiKeys(deps, accountId, undefined, true)).items.map((k) => k._id)).toEqual([a.key._id]);
  });

  it('revokes every live key of the account, page after page, each with its own api_key.revoked, and no other account’s', async () => {
    const { store, outbox, deps, b, accountId, a } = await setup();
    for (let i = 0; i < MAX_LIVE_KEYS - 1; i++)
      await createApiKey(deps, { account_id: accountId, scope: i % 2 ? 'full' : 'validate', name: `k${i}` });
    // Keys stored before the cap existed can be more than a page of them.
    for (let i = 0; i < 130; i++) {
      const id = `key_${String(i).padStart(26, '0')}`;
      store.keys.set(id, { ...store.keys.get(a.key._id)!, _id: id, digest: id, slot_key: `legacy:${id}` });
    }
    const live = MAX_LIVE_KEYS + 130;
    store.events.length = 0;
    outbox.flushed.length = 0;
    const liveIds = [...store.keys.values()].filter((k) => k.account_id === accountId).map((k) => k._id);
    expect(await revokeAllApiKeys(deps, { account_id: accountId, actor: 'ana@example.com' })).toBe(live);
    expect(await store.countLiveKeys(accountId)).toBe(0);
    expect(store.events.map((e) => e.type)).toEqual(Array(live).fill('api_key.revoked'));
    expect(new Set(store.events.map((e) => (e.data as { api_key: { id: string } }).api_key.id))).toEqual(
      new Set(liveIds),
    );
    expect(outbox.flushed).toHaveLength(live);
    expect([...store.keys.values()].find((k) => k.account_id === accountId)?.revoked_by).toBe('ana@example.com');
    expect(store.keys.get(b.key._id)?.revoked_at).toBeNull();
    // Nothing left: a second call revokes nothing.
    expect(await revokeAllApiKeys(deps, { account_id: accountId })).toBe(0);
  });

  it('refuses to revoke all without an account id, and answers an unknown account as not found', async () => {
    const { deps } = await setup();
    expect((await refusal(() => revokeAllApiKeys(deps, { account_id: '' }))).fieldErrors.map((f) => f.field)).toEqual([
      'account_id',
    ]);
    expect((await refusal(() => revokeAllApiKeys(deps, { account_id: 'acct_nope' }))).code).toBe('not_found');
  });
});

describe('authenticating an API key', () => {
  it('answers the account and the key, and records when it was used', async () => {
    const { store, clock, deps, a } = await setup();
    const { account, key } = await authenticate(deps, a.secret);
    expect(account._id).toBe(a.account._id);
    expect(key._id).toBe(a.key._id);
    expect(store.touched).toEqual([{ id: a.key._id, at: clock.now() }]);
  });

  it('records the use at most once a minute', async () => {
    const { store, clock, deps, a } = await setup();
    await authenticate(deps, a.secret);
    clock.advance(LAST_USED_RESOLUTION_MS - 1);
    await authenticate(deps, a.secret);
    expect(store.touched).toHaveLength(1);
    clock.advance(1);
    await authenticate(deps, a.secret);
    expect(store.touched).toHaveLength(2);
  });

  it('refuses a malformed key without a look-up', async () => {
    const { store, deps, a } = await setup();
    store.findKeyByDigest = async () => {
      throw new Error('looked up');
    };
    const mangled = `${a.secret.slice(0, -1)}${a.secret.endsWith('A') ? 'B' : 'A'}`;
    expect(await refusal(() => authenticate(deps, mangled))).toMatchObject({
      code: 'unauthorized',
      message: 'the API key is malformed',
    });
  });

  it('refuses a revoked key and a key of a deleted account alike', async () => {
    const { store, deps, a, b } = await setup();
    await revokeApiKey(deps, { account_id: a.account._id, key_id: a.key._id });
    store.accounts.delete(b.account._id);
    for (const secret of [a.secret, b.secret])
      expect(await refusal(() => authenticate(deps, secret))).toMatchObject({
        code: 'unauthorized',
        message: 'the API key is unknown or revoked',
      });
  });

  it('still answers when last_used_at cannot be written, and logs it', async () => {
    const { store, warnings, deps, a } = await setup();
    store.touchFails = true;
    await expect(authenticate(deps, a.secret)).resolves.toMatchObject({ key: { _id: a.key._id } });
    await Promise.resolve();
    expect(warnings).toHaveLength(1);
  });
});
