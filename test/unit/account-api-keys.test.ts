import { LAST_USED_RESOLUTION_MS } from '../../services/account/src/domain/account';
import { createAccount } from '../../services/account/src/use-cases/accounts';
import {
  createApiKey,
  listApiKeys,
  regenerateApiKey,
  revokeApiKey,
} from '../../services/account/src/use-cases/api-keys';
import { authenticate } from '../../services/account/src/use-cases/authenticate';
import { accountSetup } from '../support/fakes/account-deps';
import { refusal } from '../support/fakes/common';

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
