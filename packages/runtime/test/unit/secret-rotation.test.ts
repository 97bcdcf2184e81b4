import { randomBytes } from 'node:crypto';
import { Metadata } from '@grpc/grpc-js';
import {
  INTERNAL_CALLER_KEY,
  INTERNAL_TOKEN_KEY,
  Keyring,
  authenticateCaller,
  parseCallers,
  seal,
  tokenDigest,
} from '@licensing/runtime';

// The pure pieces of secret rotation (docs/operations.md, "Rotating secrets"): the sealing keyring
// and the internal callers' overlapping tokens.
const b64 = () => randomBytes(32).toString('base64');

describe('Keyring (SIGNING_KEY_SECRET, WEBHOOK_SECRET_KEY)', () => {
  it('a single bare key is the key "legacy" and seals in the previous format (a rollback still opens it)', () => {
    const a = b64();
    const ring = Keyring.parse(a, 'SIGNING_KEY_SECRET');
    expect(ring.currentId).toBe('legacy');
    const sealed = ring.seal(Buffer.from('secret'));
    expect(sealed).not.toContain('.');
    expect(ring.open(seal(Buffer.from('old'), Buffer.from(a, 'base64'))).toString()).toBe('old');
    expect(ring.open(sealed).toString()).toBe('secret');
  });

  it('the first key seals under its id, every key opens, the re-seal moves values to the current key', () => {
    const a = b64();
    const b = b64();
    const before = Keyring.parse(a, 'S').seal(Buffer.from('one'));
    const adding = Keyring.parse(`${a},k2:${b}`, 'S'); // step 1: k2 opens, legacy still seals
    expect(adding.currentId).toBe('legacy');
    expect(adding.isCurrent(before)).toBe(true);
    const rotated = Keyring.parse(`k2:${b},${a}`, 'S'); // step 2: k2 seals
    const after = rotated.seal(Buffer.from('two'));
    expect(after.startsWith('k2.')).toBe(true);
    // A process still on step 1 opens what step 2 sealed: no moment where one cannot read the other.
    expect(adding.open(after).toString()).toBe('two');
    expect(rotated.open(before).toString()).toBe('one');
    const moved = rotated.reseal(before);
    expect(moved.startsWith('k2.')).toBe(true);
    expect(rotated.reseal(moved)).toBe(moved); // idempotent
    const onlyB = Keyring.parse(`k2:${b}`, 'S'); // step 4: the old key dropped
    expect(onlyB.open(moved).toString()).toBe('one');
    expect(() => onlyB.open(before)).toThrow('sealed under the key "legacy", which is not configured');
  });

  it('a wrong key fails authentication, never opens garbage', () => {
    const sealed = Keyring.parse(`k1:${b64()}`, 'S').seal(Buffer.from('x'));
    expect(() => Keyring.parse(`k1:${b64()}`, 'S').open(sealed)).toThrow();
  });

  it.each([
    ['', 'must be 32 bytes'],
    ['abc', 'must be 32 bytes'],
    [`k1:${b64()},k1:${b64()}`, 'appears twice'],
    [`${b64()},${b64()}`, 'appears twice'],
    [`K!:${b64()}`, 'a key id must be'],
    [`k1:${randomBytes(16).toString('base64')}`, 'the key "k1" must be 32 bytes'],
    [Array.from({ length: 9 }, (_, i) => `k${i}:${b64()}`).join(','), 'more than 8 keys'],
  ])('refuses %j naming the setting and never echoing a key', (spec, message) => {
    let thrown: Error | undefined;
    try {
      Keyring.parse(spec, 'SIGNING_KEY_SECRET');
    } catch (err) {
      thrown = err as Error;
    }
    expect(thrown?.message).toContain('SIGNING_KEY_SECRET');
    expect(thrown?.message).toContain(message);
    for (const part of spec.split(/[,:]/)) if (part.length > 20) expect(thrown?.message).not.toContain(part);
  });
});

describe('INTERNAL_CALLERS with two tokens of one caller', () => {
  const meta = (caller: string, token: string) => {
    const m = new Metadata();
    m.set(INTERNAL_CALLER_KEY, caller);
    m.set(INTERNAL_TOKEN_KEY, token);
    return m;
  };

  it('accepts the old and the new token during the overlap, and only those', () => {
    const old = randomBytes(24).toString('hex');
    const next = randomBytes(24).toString('hex');
    const callers = parseCallers(
      `gateway=${tokenDigest(old)}\ngateway=${tokenDigest(next)},license=${tokenDigest('l')}`,
    );
    expect(authenticateCaller(callers, meta('gateway', old))).toBe('gateway');
    expect(authenticateCaller(callers, meta('gateway', next))).toBe('gateway');
    expect(authenticateCaller(callers, meta('gateway', 'other'))).toBeUndefined();
    expect(authenticateCaller(callers, meta('license', next))).toBeUndefined();
    expect(authenticateCaller(callers, meta('checkout', old))).toBeUndefined();
    // The overlap ends: only the new one.
    const after = parseCallers(`gateway=${tokenDigest(next)}`);
    expect(authenticateCaller(after, meta('gateway', old))).toBeUndefined();
    expect(authenticateCaller(after, meta('gateway', next))).toBe('gateway');
  });

  it('refuses a third token of one caller (an overlap is one old and one new)', () => {
    const spec = ['a', 'b', 'c'].map((t) => `gateway=${tokenDigest(t)}`).join(',');
    expect(() => parseCallers(spec)).toThrow('more than 2 tokens');
    // The same digest twice is one token.
    expect(parseCallers(`gateway=${tokenDigest('a')},gateway=${tokenDigest('a')}`).get('gateway')).toHaveLength(1);
  });
});
