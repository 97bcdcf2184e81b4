import { randomBytes, verify } from 'node:crypto';
import { masterKey } from '../../src/domain/signing';
import { signingHandlers } from '../../src/handlers/signing-handlers';
import { SigningKeys } from '../../src/use-cases/signing-keys';
import { FakeClock, refusal } from '../../../../test/support/fakes/common';
import { FakeProductStore, FakeSigningKeyStore } from '../../../../test/support/fakes/product-stores';

async function setup() {
  const products = new FakeProductStore();
  const keys = new FakeSigningKeyStore();
  const clock = new FakeClock();
  await products.insert(
    {
      _id: 'prod_1',
      account_id: 'acct_A',
      name: 'Editor',
      description: '',
      policy: undefined as never,
      price: null,
      created_at: clock.now(),
    },
    [],
  );
  const signing = new SigningKeys({ products, keys, master: masterKey(randomBytes(32).toString('base64')), clock });
  return { products, keys, clock, signing, handlers: signingHandlers(signing) };
}

describe('signing keys of a product', () => {
  it('makes the first key when it is first needed, once', async () => {
    const { keys, clock, signing } = await setup();
    const [first] = await signing.list('acct_A', 'prod_1');
    const again = await signing.list('acct_A', 'prod_1');
    expect(keys.docs).toHaveLength(1);
    expect(again.map((k) => k._id)).toEqual([first._id]);
    expect(first).toMatchObject({ product_id: 'prod_1', account_id: 'acct_A', created_at: clock.now() });
    expect(first.public_key_pem).toContain('BEGIN PUBLIC KEY');
    expect(first.private_key_sealed).not.toContain('PRIVATE KEY');
  });

  it('rotating adds a new current key and keeps the older ones, newest first', async () => {
    const { signing } = await setup();
    const [first] = await signing.list('acct_A', 'prod_1');
    const second = await signing.rotate('acct_A', 'prod_1');
    expect((await signing.list('acct_A', 'prod_1')).map((k) => k._id)).toEqual([second._id, first._id]);
  });

  it('signs with the current key, the kid set in the payload, verifiable with its public key', async () => {
    const { signing } = await setup();
    await signing.list('acct_A', 'prod_1');
    const current = await signing.rotate('acct_A', 'prod_1');
    const out = await signing.sign('acct_A', 'prod_1', JSON.stringify({ license: 'K-1', kid: 'forged' }));
    expect(out.kid).toBe(current._id);
    expect(JSON.parse(out.payload.toString())).toEqual({ license: 'K-1', kid: current._id });
    expect(verify(null, out.payload, current.public_key_pem, out.signature)).toBe(true);
    expect(verify(null, Buffer.from(`${out.payload} `), current.public_key_pem, out.signature)).toBe(false);
  });

  it.each([
    ['not JSON', '{nope'],
    ['an array', '[1,2]'],
    ['null', 'null'],
    ['over 8 KiB', JSON.stringify({ x: 'y'.repeat(9000) })],
  ])('refuses a payload that is %s', async (_what, json) => {
    const { signing } = await setup();
    const err = await refusal(() => signing.sign('acct_A', 'prod_1', json));
    expect(err.code).toBe('invalid_request');
    expect(err.fieldErrors[0].field).toBe('payload');
  });

  it.each([
    ['listing', (s: SigningKeys) => s.list('acct_B', 'prod_1')],
    ['rotating', (s: SigningKeys) => s.rotate('acct_B', 'prod_1')],
    ['signing', (s: SigningKeys) => s.sign('acct_B', 'prod_1', '{}')],
  ])("%s the keys of another account's product is not found and makes no key", async (_what, call) => {
    const { keys, signing } = await setup();
    expect(await refusal(() => call(signing))).toMatchObject({ code: 'not_found', message: 'product not found' });
    expect(keys.docs).toEqual([]);
  });

  it('the handlers answer Ed25519 keys with only the newest marked current', async () => {
    const { handlers, clock } = await setup();
    const ctx = { requestId: '', caller: 'gateway' as const, log: undefined as never };
    await handlers.listSigningKeys({ account_id: 'acct_A', id: 'prod_1' }, ctx);
    const rotated = await handlers.rotateSigningKey({ account_id: 'acct_A', id: 'prod_1' }, ctx);
    const { data } = await handlers.listSigningKeys({ account_id: 'acct_A', id: 'prod_1' }, ctx);
    expect(rotated).toMatchObject({
      product_id: 'prod_1',
      algorithm: 'Ed25519',
      current: true,
      created_at: clock.now().toISOString(),
    });
    expect(data.map((k) => [k.kid, k.current])).toEqual([
      [rotated.kid, true],
      [data[1].kid, false],
    ]);
    const signed = await handlers.signPayload(
      { account_id: 'acct_A', product_id: 'prod_1', payload_json: '{"a":1}' },
      ctx,
    );
    expect(signed.kid).toBe(rotated.kid);
  });
});
