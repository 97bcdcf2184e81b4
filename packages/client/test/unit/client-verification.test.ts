import { createHmac, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { verifyLicenseFile, verifyWebhook } from '@licensing/client';

// The SDK's offline checks (WebCrypto) against files and signatures made
// here with node:crypto, the way the product and webhook services make them.

const pair = () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { pem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), privateKey };
};
const vendor = pair();
const stranger = pair();
const NOW = Date.parse('2026-11-23T10:00:00Z');
const DAY = 86_400_000;

function licenseFile(overrides: Record<string, unknown> = {}, kid = 'key_1', privateKey = vendor.privateKey) {
  const payload = {
    license_key: 'AAAAA-BBBBB',
    license_id: 'lic_1',
    product_id: 'prod_1',
    customer_email: 'a@example.com',
    status: 'active',
    expires_at: null,
    fingerprint: null,
    issued_at: new Date(NOW - DAY).toISOString(),
    valid_until: new Date(NOW + 7 * DAY).toISOString(),
    kid,
    ...overrides,
  };
  const bytes = Buffer.from(JSON.stringify(payload));
  return {
    kid,
    algorithm: 'Ed25519',
    payload: bytes.toString('base64url'),
    signature: sign(null, bytes, privateKey).toString('base64url'),
  };
}
const publicKeys = [
  { kid: 'key_2', public_key_pem: stranger.pem },
  { kid: 'key_1', public_key_pem: vendor.pem },
];
const flip = (b64: string, at: number) => {
  const bytes = Buffer.from(b64, 'base64url');
  bytes[at] ^= 1;
  return bytes.toString('base64url');
};

describe('verifyLicenseFile', () => {
  it('accepts a genuine file with the key its kid names, and answers the signed facts', async () => {
    const result = await verifyLicenseFile(licenseFile(), { publicKeys, now: NOW });
    expect(result).toEqual({
      valid: true,
      license: expect.objectContaining({ license_key: 'AAAAA-BBBBB', product_id: 'prod_1', kid: 'key_1' }),
    });
    // The REST body of GET /signing-keys works as well as its data array.
    await expect(
      verifyLicenseFile(licenseFile(), { publicKeys: { data: publicKeys }, now: new Date(NOW) }),
    ).resolves.toMatchObject({ valid: true });
  });

  it('refuses a file whose payload or signature changed by one bit', async () => {
    const file = licenseFile();
    await expect(
      verifyLicenseFile({ ...file, payload: flip(file.payload, 12) }, { publicKeys, now: NOW }),
    ).resolves.toEqual({ valid: false, reason: 'bad_signature', license: null });
    await expect(
      verifyLicenseFile({ ...file, signature: flip(file.signature, 3) }, { publicKeys, now: NOW }),
    ).resolves.toEqual({ valid: false, reason: 'bad_signature', license: null });
  });

  it('refuses a file signed by another key posing under a known kid, or naming an unknown kid', async () => {
    await expect(
      verifyLicenseFile(licenseFile({}, 'key_1', stranger.privateKey), { publicKeys, now: NOW }),
    ).resolves.toMatchObject({ valid: false, reason: 'bad_signature' });
    await expect(verifyLicenseFile(licenseFile({}, 'key_9'), { publicKeys, now: NOW })).resolves.toMatchObject({
      valid: false,
      reason: 'unknown_key',
    });
    // Signed by key_2 but saying key_1 inside: the outer kid is not signed, the inner one is.
    await expect(
      verifyLicenseFile(licenseFile({ kid: 'key_1' }, 'key_2', stranger.privateKey), { publicKeys, now: NOW }),
    ).resolves.toMatchObject({ valid: false, reason: 'kid_mismatch' });
  });

  it("refuses a file after valid_until, and one issued in this machine's future (clock turned back)", async () => {
    const file = licenseFile();
    const validUntil = NOW + 7 * DAY;
    await expect(verifyLicenseFile(file, { publicKeys, now: validUntil })).resolves.toMatchObject({ valid: true });
    await expect(verifyLicenseFile(file, { publicKeys, now: validUntil + 1 })).resolves.toEqual({
      valid: false,
      reason: 'expired',
      license: expect.objectContaining({ license_id: 'lic_1' }),
    });
    await expect(verifyLicenseFile(file, { publicKeys, now: NOW - 2 * DAY })).resolves.toMatchObject({
      valid: false,
      reason: 'not_yet_valid',
    });
  });

  it('refuses a file bound to another machine when the app gives its fingerprint', async () => {
    const file = licenseFile({ fingerprint: 'box-1' });
    await expect(verifyLicenseFile(file, { publicKeys, now: NOW, fingerprint: 'box-1' })).resolves.toMatchObject({
      valid: true,
    });
    await expect(verifyLicenseFile(file, { publicKeys, now: NOW, fingerprint: 'box-2' })).resolves.toMatchObject({
      valid: false,
      reason: 'fingerprint_mismatch',
    });
  });

  it('refuses a machine-bound file when the app gives no fingerprint, and takes an unbound one without', async () => {
    await expect(verifyLicenseFile(licenseFile({ fingerprint: 'box-1' }), { publicKeys, now: NOW })).resolves.toEqual({
      valid: false,
      reason: 'fingerprint_required',
      license: expect.objectContaining({ fingerprint: 'box-1' }),
    });
    await expect(
      verifyLicenseFile(licenseFile({ fingerprint: 'box-1' }), { publicKeys, now: NOW, fingerprint: '' }),
    ).resolves.toMatchObject({ valid: false, reason: 'fingerprint_mismatch' });
    await expect(
      verifyLicenseFile(licenseFile({ fingerprint: null }), { publicKeys, now: NOW }),
    ).resolves.toMatchObject({ valid: true });
  });

  it('says malformed or unsupported for files that are not licence files', async () => {
    await expect(verifyLicenseFile({ kid: 'key_1' }, { publicKeys })).resolves.toEqual({
      valid: false,
      reason: 'malformed',
      license: null,
    });
    await expect(verifyLicenseFile('{}', { publicKeys })).resolves.toMatchObject({ reason: 'malformed' });
    await expect(verifyLicenseFile({ ...licenseFile(), algorithm: 'RS256' }, { publicKeys })).resolves.toMatchObject({
      reason: 'unsupported_algorithm',
    });
    await expect(verifyLicenseFile({ ...licenseFile(), signature: '!!' }, { publicKeys })).resolves.toMatchObject({
      reason: 'malformed',
    });
  });

  it('throws a TypeError when the public keys are missing or wrong, since that is a bug in the app', async () => {
    await expect(verifyLicenseFile(licenseFile(), {} as never)).rejects.toThrow(
      'publicKeys must be an array of {kid, public_key_pem}',
    );
    await expect(verifyLicenseFile(licenseFile(), { publicKeys: [{ kid: 'key_1' }] as never })).rejects.toThrow(
      'every public key needs a kid and a public_key_pem string',
    );
  });
});

describe('verifyWebhook', () => {
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const nowS = Math.floor(NOW / 1000);
  const signed = (body: string, ts = nowS, secrets = [secret], id = 'msg_1') => ({
    'webhook-id': id,
    'webhook-timestamp': String(ts),
    'webhook-signature': secrets
      .map(
        (s) =>
          `v1,${createHmac('sha256', Buffer.from(s.slice(6), 'base64'))
            .update(`${id}.${ts}.${body}`)
            .digest('base64')}`,
      )
      .join(' '),
  });
  const body = JSON.stringify({
    id: 'evt_1',
    type: 'license.created',
    created_at: '2026-11-23T10:00:00Z',
    data: { key: 'K' },
  });

  it('accepts a genuine request as a string, bytes, or with fetch Headers, and answers the event', async () => {
    await expect(verifyWebhook(body, signed(body), secret, { now: NOW })).resolves.toEqual({
      valid: true,
      event: JSON.parse(body),
    });
    await expect(verifyWebhook(Buffer.from(body), signed(body), secret, { now: NOW })).resolves.toMatchObject({
      valid: true,
    });
    await expect(verifyWebhook(body, new Headers(signed(body)), secret, { now: NOW })).resolves.toMatchObject({
      valid: true,
    });
    const upper = Object.fromEntries(Object.entries(signed(body)).map(([k, v]) => [k.toUpperCase(), [v]]));
    await expect(verifyWebhook(body, upper, secret, { now: NOW })).resolves.toMatchObject({ valid: true });
  });

  it('refuses another secret, a changed body, and a changed id', async () => {
    const other = `whsec_${randomBytes(24).toString('base64')}`;
    await expect(verifyWebhook(body, signed(body), other, { now: NOW })).resolves.toEqual({
      valid: false,
      reason: 'bad_signature',
    });
    await expect(verifyWebhook(body.replace('"K"', '"L"'), signed(body), secret, { now: NOW })).resolves.toEqual({
      valid: false,
      reason: 'bad_signature',
    });
    await expect(
      verifyWebhook(body, { ...signed(body), 'webhook-id': 'msg_2' }, secret, { now: NOW }),
    ).resolves.toEqual({ valid: false, reason: 'bad_signature' });
  });

  it('accepts any of several signatures (secret rotation)', async () => {
    const old = `whsec_${randomBytes(24).toString('base64')}`;
    await expect(verifyWebhook(body, signed(body, nowS, [old, secret]), secret, { now: NOW })).resolves.toMatchObject({
      valid: true,
    });
    await expect(verifyWebhook(body, signed(body, nowS, [old, secret]), old, { now: NOW })).resolves.toMatchObject({
      valid: true,
    });
  });

  it('allows 5 minutes between the timestamp and now, either way, and no more', async () => {
    await expect(verifyWebhook(body, signed(body, nowS - 300), secret, { now: NOW })).resolves.toMatchObject({
      valid: true,
    });
    await expect(verifyWebhook(body, signed(body, nowS + 300), secret, { now: NOW })).resolves.toMatchObject({
      valid: true,
    });
    await expect(verifyWebhook(body, signed(body, nowS - 301), secret, { now: NOW })).resolves.toEqual({
      valid: false,
      reason: 'timestamp_out_of_tolerance',
    });
    await expect(verifyWebhook(body, signed(body, nowS + 301), secret, { now: NOW })).resolves.toEqual({
      valid: false,
      reason: 'timestamp_out_of_tolerance',
    });
  });

  it('says what is missing or malformed, and throws for a parsed body or a missing secret', async () => {
    await expect(verifyWebhook(body, {}, secret)).resolves.toEqual({ valid: false, reason: 'missing_headers' });
    await expect(verifyWebhook(body, { ...signed(body), 'webhook-timestamp': 'yesterday' }, secret)).resolves.toEqual({
      valid: false,
      reason: 'invalid_timestamp',
    });
    await expect(verifyWebhook(JSON.parse(body), signed(body), secret)).rejects.toThrow(
      'body must be the raw request body',
    );
    await expect(verifyWebhook(body, signed(body), '')).rejects.toThrow(
      "secret must be the endpoint's whsec_… signing secret",
    );
  });
});
