import { createPublicKey, verify } from 'node:crypto';
import { client } from '../support/stack';
import { openSharedStack, type OpenSharedStack } from '../support/shared-stack';

// Verification written independently of the service, with node:crypto only:
// what an app does offline with a licence file and the product's public keys.
interface PublicKey {
  kid: string;
  public_key_pem: string;
}
interface LicenseFile {
  kid: string;
  algorithm: string;
  payload: string;
  signature: string;
}

function verifyLicenseFile(
  file: LicenseFile,
  keys: PublicKey[],
  now = Date.now(),
): { ok: true; payload: Record<string, unknown> } | { ok: false; why: string } {
  const key = keys.find((k) => k.kid === file.kid);
  if (!key || file.algorithm !== 'Ed25519') return { ok: false, why: 'unknown key' };
  const bytes = Buffer.from(file.payload, 'base64url');
  if (!verify(null, bytes, createPublicKey(key.public_key_pem), Buffer.from(file.signature, 'base64url')))
    return { ok: false, why: 'bad signature' };
  const payload = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  if (payload.kid !== file.kid) return { ok: false, why: 'kid mismatch' };
  if (Date.parse(String(payload.valid_until)) < now) return { ok: false, why: 'expired file' };
  return { ok: true, payload };
}

const flip = (b64: string, at: number) => {
  const bytes = Buffer.from(b64, 'base64url');
  bytes[at] ^= 0x01;
  return bytes.toString('base64url');
};

let stack: OpenSharedStack;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  stack = await openSharedStack();
  const acct = await stack.newAccount();
  await stack.admin.updateAccount({ id: acct.accountId, per_minute_limit: 100_000 });
  api = client(stack.url, acct.apiKey);
});

afterAll(async () => {
  await stack?.close();
});

async function productAndLicense(policy?: Record<string, unknown>) {
  const productId = (await api('POST', '/api/v1/products', { name: 'Offline app', ...(policy ? { policy } : {}) })).body
    .id as string;
  const key = (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'offline@example.com' }))
    .body.license_key as string;
  return { productId, key };
}

const publicKeys = async (productId: string) =>
  (await api('GET', `/api/v1/products/${productId}/signing-keys`)).body.data as (PublicKey & { current: boolean })[];

it('issues a file that verifies with only the public key, and says what the app needs', async () => {
  const { productId, key } = await productAndLicense({ duration_days: 365 });
  const res = await api('POST', `/api/v1/licenses/${key}/file`, { ttl_days: 7 });
  expect(res.status).toBe(201);
  const keys = await publicKeys(productId);
  expect(keys).toEqual([
    {
      kid: res.body.kid,
      algorithm: 'Ed25519',
      public_key_pem: expect.stringContaining('BEGIN PUBLIC KEY'),
      current: true,
      created_at: expect.any(String),
    },
  ]);
  const verified = verifyLicenseFile(res.body, keys);
  expect(verified).toEqual({
    ok: true,
    payload: {
      license_key: key,
      license_id: expect.stringMatching(/^lic_/),
      product_id: productId,
      customer_email: 'offline@example.com',
      status: 'active',
      expires_at: expect.any(String),
      fingerprint: null,
      entitlements: [],
      issued_at: expect.any(String),
      valid_until: expect.any(String),
      expiration_strategy: 'restrict',
      kid: res.body.kid,
    },
  });
  const p = (verified as { payload: Record<string, string> }).payload;
  expect(Date.parse(p.valid_until) - Date.parse(p.issued_at)).toBe(7 * 86_400_000);
});

it('is refused after one byte of payload or signature changes, after valid_until, and with another product’s key', async () => {
  const { productId, key } = await productAndLicense();
  const file = (await api('POST', `/api/v1/licenses/${key}/file`, {})).body as LicenseFile;
  const keys = await publicKeys(productId);
  expect(verifyLicenseFile(file, keys).ok).toBe(true);
  expect(verifyLicenseFile({ ...file, payload: flip(file.payload, 10) }, keys)).toEqual({
    ok: false,
    why: 'bad signature',
  });
  expect(verifyLicenseFile({ ...file, signature: flip(file.signature, 5) }, keys)).toEqual({
    ok: false,
    why: 'bad signature',
  });
  const validUntil = Date.parse(
    String((verifyLicenseFile(file, keys) as { payload: Record<string, unknown> }).payload.valid_until),
  );
  expect(verifyLicenseFile(file, keys, validUntil + 1)).toEqual({ ok: false, why: 'expired file' });
  const other = await productAndLicense();
  const otherKeys = (await publicKeys(other.productId)).map((k) => ({ ...k, kid: file.kid })); // even posing as the right kid
  expect(verifyLicenseFile(file, otherKeys)).toEqual({ ok: false, why: 'bad signature' });
});

it('key rotation keeps old files verifiable by kid; new files use the new key', async () => {
  const { productId, key } = await productAndLicense();
  const before = (await api('POST', `/api/v1/licenses/${key}/file`, {})).body as LicenseFile;
  const rotated = await api('POST', `/api/v1/products/${productId}/signing-keys/rotate`);
  expect(rotated.status).toBe(201);
  expect(rotated.body.kid).not.toBe(before.kid);
  const after = (await api('POST', `/api/v1/licenses/${key}/file`, {})).body as LicenseFile;
  expect(after.kid).toBe(rotated.body.kid);
  const keys = await publicKeys(productId);
  expect(keys.map((k) => [k.kid, k.current])).toEqual([
    [after.kid, true],
    [before.kid, false],
  ]);
  expect(verifyLicenseFile(before, keys).ok).toBe(true);
  expect(verifyLicenseFile(after, keys).ok).toBe(true);
});

it('binds to an activated machine when the policy requires activation, and never outlives the licence', async () => {
  const { key } = await productAndLicense({
    require_activation: true,
    max_activations: 2,
    duration_days: 10,
    grace_days: 2,
  });
  expect((await api('POST', `/api/v1/licenses/${key}/file`, {})).status).toBe(400);
  expect((await api('POST', `/api/v1/licenses/${key}/file`, { fingerprint: 'unknown-box' })).status).toBe(409);
  await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'box-1' });
  const res = await api('POST', `/api/v1/licenses/${key}/file`, { fingerprint: 'box-1', ttl_days: 365 });
  expect(res.status).toBe(201);
  const payload = JSON.parse(Buffer.from(res.body.payload, 'base64url').toString('utf8'));
  expect(payload.fingerprint).toBe('box-1');
  expect(Date.parse(payload.valid_until)).toBe(Date.parse(payload.expires_at) + 2 * 86_400_000); // expiry + grace, not 365 days
});

it('refuses bad input, inactive licences, and other accounts (404)', async () => {
  const { productId, key } = await productAndLicense();
  for (const body of [
    { ttl_days: 0 },
    { ttl_days: 400 },
    { ttl_days: '7' },
    { fingerprint: 'x'.repeat(201) },
    { extra: true },
  ]) {
    expect((await api('POST', `/api/v1/licenses/${key}/file`, body)).status).toBe(400);
  }
  await api('POST', `/api/v1/licenses/${key}/suspend`);
  const suspended = await api('POST', `/api/v1/licenses/${key}/file`, {});
  expect(suspended.status).toBe(409);
  expect(suspended.body.detail).toBe('the licence is suspended: no licence file can be issued');
  const other = client(stack.url, (await stack.newAccount()).apiKey);
  expect((await other('GET', `/api/v1/products/${productId}/signing-keys`)).status).toBe(404);
  expect((await other('POST', `/api/v1/products/${productId}/signing-keys/rotate`)).status).toBe(404);
  expect((await other('POST', `/api/v1/licenses/${key}/file`, {})).status).toBe(404);
  expect((await api('GET', '/api/v1/products/nope/signing-keys')).status).toBe(400);
});

it('keeps only the public key in the clear: the private key is sealed with the configured secret', async () => {
  const { productId } = await productAndLicense();
  await publicKeys(productId);
  const { connectMongo } = await import('@licensing/runtime');
  const db = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_product`);
  try {
    const raw = await db.collection('signing_keys').findOne({ product_id: productId });
    expect(raw).toMatchObject({
      public_key_pem: expect.stringContaining('PUBLIC KEY'),
      private_key_sealed: expect.any(String),
    });
    const sealed = Buffer.from(String(raw!.private_key_sealed), 'base64url');
    // A PKCS#8 Ed25519 key starts with these bytes in DER; the sealed form must not contain them.
    expect(sealed.includes(Buffer.from('302e020100300506032b6570', 'hex'))).toBe(false);
    expect(JSON.stringify(raw)).not.toMatch(/PRIVATE KEY/);
  } finally {
    await db.close();
  }
});

describe('files asked for with app credentials show what a validation would', () => {
  const fileOf = (res: { status: number; body: LicenseFile & { detail?: string } }) => {
    expect([res.status, res.body.detail]).toEqual([201, undefined]);
    return JSON.parse(Buffer.from(res.body.payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  };
  const days = (payload: Record<string, unknown>) =>
    Math.round((Date.parse(String(payload.valid_until)) - Date.parse(String(payload.issued_at))) / 86_400_000);
  const asLicense = (key: string) => (method: string, path: string, body?: unknown) =>
    client(stack.url)(method, path, body, { authorization: `License ${key}` });

  async function validateKey() {
    const acct = await stack.newAccount();
    const full = client(stack.url, acct.apiKey);
    const secret = (await stack.admin.createApiKey({ account_id: acct.accountId, scope: 'validate', name: 'app' }))
      .secret;
    return { full, app: client(stack.url, secret) };
  }

  it('customer_email is null for a License credential and a validate-scope key unless the policy shows it', async () => {
    const { full, app } = await validateKey();
    for (const see of [false, true]) {
      const product = (
        await full('POST', '/api/v1/products', { name: 'Files', policy: { validate_keys_see_email: see } })
      ).body.id;
      const key = (await full('POST', '/api/v1/licenses', { product_id: product, customer_email: 'who@example.com' }))
        .body.license_key;
      const shown = see ? 'who@example.com' : null;
      const byLicense = await asLicense(key)('POST', `/api/v1/licenses/${key}/file`, {});
      expect(byLicense.status).toBe(201);
      expect(fileOf(byLicense).customer_email).toBe(shown);
      const byKey = await app('POST', `/api/v1/licenses/${key}/file`, {});
      expect(byKey.status).toBe(201);
      expect(fileOf(byKey).customer_email).toBe(shown);
      // The vendor's own key always sees it.
      expect(fileOf(await full('POST', `/api/v1/licenses/${key}/file`, {})).customer_email).toBe('who@example.com');
    }
  });

  it('max_file_ttl_days (default 30) caps the files of app credentials; a full key may still ask for 365', async () => {
    const { full, app } = await validateKey();
    const plain = (await full('POST', '/api/v1/products', { name: 'Default cap' })).body;
    expect(plain.policy.max_file_ttl_days).toBe(30);
    const plainKey = (await full('POST', '/api/v1/licenses', { product_id: plain.id, customer_email: 'a@example.com' }))
      .body.license_key;
    const tooLong = await asLicense(plainKey)('POST', `/api/v1/licenses/${plainKey}/file`, { ttl_days: 365 });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toMatchObject({ code: 'invalid_request', errors: [{ field: 'ttl_days' }] });
    expect(tooLong.body.detail).toMatch(/at most 30 days .*max_file_ttl_days/);
    expect(days(fileOf(await asLicense(plainKey)('POST', `/api/v1/licenses/${plainKey}/file`, {})))).toBe(30);
    expect(days(fileOf(await full('POST', `/api/v1/licenses/${plainKey}/file`, { ttl_days: 365 })))).toBe(365);

    const created = await full('POST', '/api/v1/products', { name: 'Week cap', policy: { max_file_ttl_days: 7 } });
    expect(created.status).toBe(201);
    expect(created.body.policy.max_file_ttl_days).toBe(7);
    const key = (
      await full('POST', '/api/v1/licenses', { product_id: created.body.id, customer_email: 'b@example.com' })
    ).body.license_key;
    expect(days(fileOf(await app('POST', `/api/v1/licenses/${key}/file`, {})))).toBe(7);
    expect((await app('POST', `/api/v1/licenses/${key}/file`, { ttl_days: 8 })).status).toBe(400);
    expect(days(fileOf(await app('POST', `/api/v1/licenses/${key}/file`, { ttl_days: 3 })))).toBe(3);

    // Patched like any policy field, and refused out of its range.
    const patched = await full('PATCH', `/api/v1/products/${created.body.id}`, {
      policy: { ...created.body.policy, max_file_ttl_days: 90 },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.policy.max_file_ttl_days).toBe(90);
    const refused = await full('POST', '/api/v1/products', { name: 'Bad', policy: { max_file_ttl_days: 366 } });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/max_file_ttl_days/);
  });
});
