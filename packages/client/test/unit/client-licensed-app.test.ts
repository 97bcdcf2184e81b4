import { generateKeyPairSync } from 'node:crypto';
import { type Activation, LicensedApp, LicensingClient, LicensingError, heartbeatIntervalMs } from '@licensing/client';
import { Transport } from '../../src/http';
import { fakeFetch, json } from '../../../../test/support/fake-fetch';
import { BASE, KEY, fakeServer, signedLicenseFile } from '../../../../test/support/fake-licensing-server';

// LicensedApp's own logic against a scripted server (a fake fetch that keeps
// seats in a Map, the way the API's contract describes them): the licence
// credential, the heartbeat schedule on fake timers, re-activation after a
// lapse, a stop() that releases once, and offline checks of licence files.

const app = (
  server: ReturnType<typeof fakeServer>,
  extra: Partial<ConstructorParameters<typeof LicensedApp>[0]> = {},
) =>
  new LicensedApp({
    baseUrl: BASE,
    licenseKey: KEY,
    fingerprint: 'box-1',
    fetch: server.fetch,
    maxRetries: 0,
    ...extra,
  });

const HEARTBEAT = /\/heartbeat$/;
const ACTIVATIONS = /\/activations$/;

afterEach(() => {
  jest.useRealTimers();
});

describe('the licence credential', () => {
  it('sends Authorization: License <key> on every request, and needs no API key', async () => {
    const server = fakeServer();
    const licensed = app(server);
    await licensed.activate();
    await licensed.validate();
    await licensed.heartbeat();
    await licensed.file();
    await licensed.deactivate();
    expect(server.sent.map((s) => s.authorization)).toEqual(Array(5).fill(`License ${KEY}`));
    expect(server.sent.map((s) => `${s.method} ${s.path}`)).toEqual([
      `POST /api/v1/licenses/${KEY}/activations`,
      'POST /api/v1/keys/validate',
      `POST /api/v1/licenses/${KEY}/activations/act_1/heartbeat`,
      `POST /api/v1/licenses/${KEY}/file`,
      `DELETE /api/v1/licenses/${KEY}/activations/act_1`,
    ]);
    expect(server.sent[3].body).toEqual({ fingerprint: 'box-1' });
  });

  it('the transport takes exactly one credential, printable, and API keys still go as Bearer', async () => {
    const base = { baseUrl: BASE, fetch: fakeFetch(json(200, {})).fetch, timeoutMs: 1_000, maxRetries: 0 };
    const transport = (credential: object) => new Transport({ ...base, maxRetryDelayMs: 0, ...credential });
    expect(() => transport({})).toThrow(/exactly one credential/);
    expect(() => transport({ apiKey: 'lk_full_x', licenseKey: KEY })).toThrow(/exactly one credential/);
    expect(() => transport({ licenseKey: 'A B' })).toThrow(/licence key must be printable ASCII/);
    expect(() => transport({ licenseKey: 'A\r\nX-Evil: 1' })).toThrow(TypeError);
    const fake = fakeFetch(json(200, { id: 'act_1', lease_expires_at: null }));
    const client = new LicensingClient({ baseUrl: BASE, apiKey: 'lk_full_x', fetch: fake.fetch });
    await client.licenses.heartbeat(KEY, 'act_1');
    expect(fake.calls[0]).toMatchObject({
      method: 'POST',
      url: `${BASE}/api/v1/licenses/${KEY}/activations/act_1/heartbeat`,
      headers: { authorization: 'Bearer lk_full_x' },
    });
    await expect(client.licenses.heartbeat(KEY, '')).rejects.toThrow(TypeError);
  });

  it('refuses bad options before sending anything', () => {
    const server = fakeServer();
    expect(() => app(server, { fingerprint: '' })).toThrow(/fingerprint must be a non-empty string/);
    expect(() => app(server, { licenseKey: undefined as unknown as string })).toThrow(/licenseKey/);
    expect(() => app(server, { baseUrl: 'licensing.example.test' })).toThrow(/baseUrl/);
    expect(() => app(server, { onError: 'log' as unknown as () => void })).toThrow(/onError must be a function/);
    expect(server.sent).toHaveLength(0);
  });
});

describe('activate, validate, heartbeat, deactivate', () => {
  it('activation is idempotent per fingerprint and concurrent calls share one request', async () => {
    const server = fakeServer();
    const licensed = app(server);
    const [a, b] = await Promise.all([licensed.activate(), licensed.activate()]);
    expect(a).toBe(b);
    expect(await licensed.activate()).toMatchObject({ id: a.id });
    expect(server.count('POST', ACTIVATIONS)).toBe(2);
    expect(server.seats.size).toBe(1);
    expect(licensed.activation?.id).toBe('act_1');
  });

  it('validates with the fingerprint and the entitlements asked for', async () => {
    const server = fakeServer();
    const licensed = app(server, { productId: 'prod_1' });
    await licensed.activate();
    await expect(licensed.validate({ entitlements: ['pdf-export'] })).resolves.toMatchObject({
      valid: true,
      entitlements: ['pdf-export', 'sso-lite'],
    });
    await expect(licensed.validate({ entitlements: ['sso'] })).resolves.toMatchObject({
      valid: false,
      code: 'entitlements_missing',
      next_action: 'contact_vendor',
    });
    expect(server.sent[1].body).toEqual({
      key: KEY,
      product_id: 'prod_1',
      fingerprint: 'box-1',
      entitlements: ['pdf-export'],
    });
    await expect(licensed.validate({ entitlements: 'sso' as unknown as string[] })).rejects.toThrow(
      /entitlements must be an array/,
    );
  });

  it('a heartbeat of a lapsed seat re-activates once and remembers the new seat', async () => {
    const server = fakeServer();
    const licensed = app(server);
    await licensed.activate();
    server.lapse('act_1');
    await expect(licensed.heartbeat()).resolves.toMatchObject({ id: 'act_2', fingerprint: 'box-1' });
    expect(licensed.activation?.id).toBe('act_2');
    await licensed.heartbeat();
    expect(server.sent.map((s) => `${s.method} ${s.path.replace(`/api/v1/licenses/${KEY}`, '')}`)).toEqual([
      'POST /activations',
      'POST /activations/act_1/heartbeat',
      'POST /activations',
      'POST /activations/act_2/heartbeat',
    ]);
  });

  it('a lapsed seat taken meanwhile by another machine is an error, after one re-activation only', async () => {
    const server = fakeServer();
    const licensed = app(server);
    await licensed.activate();
    server.lapse('act_1');
    await app(server, { fingerprint: 'box-2' }).activate();
    const error = await licensed.heartbeat().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LicensingError);
    expect(error).toMatchObject({ status: 409, detail: expect.stringMatching(/^activation_limit_reached/) });
    expect(server.count('POST', ACTIVATIONS)).toBe(3);
    expect(licensed.activation).toBeNull();
  });

  it('a network failure of a heartbeat is thrown as it is, without re-activating', async () => {
    const server = fakeServer();
    const licensed = app(server);
    await licensed.activate();
    server.down(true);
    await expect(licensed.heartbeat()).rejects.toMatchObject({ status: 0, code: 'network_error' });
    expect(server.count('POST', ACTIVATIONS)).toBe(1);
    expect(licensed.activation?.id).toBe('act_1');
  });

  it('deactivate releases the remembered seat, counts a seat already gone as released, and then does nothing', async () => {
    const server = fakeServer();
    const licensed = app(server);
    await licensed.deactivate();
    expect(server.sent).toHaveLength(0);
    await licensed.activate();
    server.lapse('act_1');
    await licensed.deactivate();
    expect(licensed.activation).toBeNull();
    await licensed.deactivate();
    expect(server.count('DELETE', /act_1$/)).toBe(1);
  });
});

describe('start() and stop()', () => {
  it('heartbeats every third of the lease on an unref’d timer, one at a time', async () => {
    jest.useFakeTimers();
    const server = fakeServer({ lease_seconds: 60 });
    const beats: Activation[] = [];
    const licensed = app(server, { onHeartbeat: (a) => beats.push(a) });
    const state = await licensed.start();
    expect(state).toMatchObject({
      activation: { id: 'act_1' },
      validation: { valid: true },
      entitlements: ['pdf-export', 'sso-lite'],
      leaseSeconds: 60,
      heartbeatEveryMs: 20_000,
    });
    expect(licensed.isRunning).toBe(true);
    expect(jest.getTimerCount()).toBe(1);
    expect((licensed as unknown as { timer: { hasRef(): boolean } }).timer.hasRef()).toBe(false);
    await jest.advanceTimersByTimeAsync(19_999);
    expect(server.count('POST', HEARTBEAT)).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(server.count('POST', HEARTBEAT)).toBe(1);
    await jest.advanceTimersByTimeAsync(40_000);
    expect(server.count('POST', HEARTBEAT)).toBe(3);
    expect(beats).toHaveLength(3);
    expect(jest.getTimerCount()).toBe(1);
    await licensed.stop();
  });

  it('a node-locked activation (lease_seconds null) is not heartbeated', async () => {
    jest.useFakeTimers();
    const server = fakeServer({ lease_seconds: null });
    const licensed = app(server);
    await expect(licensed.start()).resolves.toMatchObject({ leaseSeconds: null, heartbeatEveryMs: null });
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(3_600_000);
    expect(server.count('POST', HEARTBEAT)).toBe(0);
  });

  it('after a lapse the timer re-activates; a failure goes to onError, never unhandled, and the timer goes on', async () => {
    jest.useFakeTimers();
    const server = fakeServer({ lease_seconds: 30 });
    const errors: Error[] = [];
    const licensed = app(server, { onError: (e) => errors.push(e) });
    await licensed.start();
    server.lapse('act_1');
    await jest.advanceTimersByTimeAsync(10_000);
    expect(licensed.activation?.id).toBe('act_2');
    expect(server.count('POST', ACTIVATIONS)).toBe(2);
    server.down(true);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(errors).toEqual([expect.objectContaining({ code: 'network_error' })]);
    expect(licensed.lastError).toBe(errors[0]);
    server.down(false);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(errors).toHaveLength(1);
    expect(licensed.lastError).toBeNull();
    expect(server.count('POST', HEARTBEAT)).toBe(3);
    await licensed.stop();
  });

  it('without onError, a failing background heartbeat is kept in lastError', async () => {
    jest.useFakeTimers();
    const server = fakeServer({ lease_seconds: 30 });
    const licensed = app(server, {
      onHeartbeat: () => {
        throw new Error('a broken hook');
      },
    });
    await licensed.start();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(licensed.lastError?.message).toBe('a broken hook');
    await licensed.stop();
  });

  it('stop() stops heartbeating and releases the seat once, however often it is called', async () => {
    jest.useFakeTimers();
    const server = fakeServer({ lease_seconds: 60 });
    const licensed = app(server);
    await licensed.start();
    await Promise.all([licensed.stop(), licensed.stop()]);
    await licensed.stop();
    expect(server.count('DELETE', /\/activations\/act_1$/)).toBe(1);
    expect(server.seats.size).toBe(0);
    expect(licensed.isRunning).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(600_000);
    expect(server.count('POST', HEARTBEAT)).toBe(0);
    // Another machine can take the freed seat.
    await expect(app(server, { fingerprint: 'box-2' }).activate()).resolves.toMatchObject({ id: 'act_2' });
  });

  it('a stop() during start() waits for it, releases the seat it took, and leaves no timer', async () => {
    jest.useFakeTimers();
    const server = fakeServer({ lease_seconds: 60 });
    const licensed = app(server);
    const started = licensed.start();
    const stopped = licensed.stop();
    await expect(started).resolves.toMatchObject({ activation: { id: 'act_1' } });
    await stopped;
    expect(server.seats.size).toBe(0);
    expect(licensed.isRunning).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('a stop() during a heartbeat that re-activates waits for it and releases the new seat', async () => {
    jest.useFakeTimers();
    const server = fakeServer({ lease_seconds: 30 });
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const licensed = app(server, {
      // Heartbeats wait until the test lets them through.
      fetch: async (input, init) => {
        if (String(input).endsWith('/heartbeat')) await held;
        return server.fetch(input, init);
      },
    });
    await licensed.start();
    server.lapse('act_1');
    await jest.advanceTimersByTimeAsync(10_000);
    const stopped = licensed.stop();
    release();
    await stopped;
    expect(server.sent.map((s) => `${s.method} ${s.path.replace(`/api/v1/licenses/${KEY}`, '')}`)).toEqual([
      'POST /activations',
      'POST /api/v1/keys/validate',
      'POST /activations/act_1/heartbeat',
      'POST /activations',
      'DELETE /activations/act_2',
    ]);
    expect(server.seats.size).toBe(0);
  });

  it('each seat taken is released by the stop() after it', async () => {
    const server = fakeServer({ lease_seconds: null });
    const licensed = app(server);
    await licensed.activate();
    await licensed.stop();
    await licensed.activate();
    await licensed.stop();
    expect(server.count('DELETE', /\/activations\/act_\d+$/)).toBe(2);
    expect(server.seats.size).toBe(0);
  });

  it('a release that failed (offline) is tried again by the next stop()', async () => {
    const server = fakeServer({ lease_seconds: 60 });
    const licensed = app(server);
    await licensed.start();
    server.down(true);
    await expect(licensed.stop()).rejects.toMatchObject({ code: 'network_error' });
    server.down(false);
    await licensed.stop();
    expect(server.seats.size).toBe(0);
  });

  it('a start() refused for want of a seat throws and schedules nothing', async () => {
    jest.useFakeTimers();
    const server = fakeServer({ lease_seconds: 60 });
    await app(server).start();
    const second = app(server, { fingerprint: 'box-2' });
    await expect(second.start()).rejects.toMatchObject({ status: 409 });
    expect(second.isRunning).toBe(false);
    expect(jest.getTimerCount()).toBe(1);
  });

  it('heartbeatIntervalMs is a third of the lease', () => {
    expect([30, 60, 86_400].map(heartbeatIntervalMs)).toEqual([10_000, 20_000, 28_800_000]);
  });
});

describe('verifyOffline()', () => {
  const vendor = generateKeyPairSync('ed25519');
  const publicKeys = [
    { kid: 'key_1', public_key_pem: vendor.publicKey.export({ type: 'spki', format: 'pem' }).toString() },
  ];
  const NOW = Date.parse('2026-11-23T10:00:00Z');
  const DAY = 86_400_000;
  const file = (overrides: Record<string, unknown> = {}) =>
    signedLicenseFile(vendor.privateKey, {
      fingerprint: 'box-1',
      issued_at: new Date(NOW - DAY).toISOString(),
      valid_until: new Date(NOW + 7 * DAY).toISOString(),
      entitlements: ['pdf-export'],
      ...overrides,
    });
  const offline = (extra: Partial<ConstructorParameters<typeof LicensedApp>[0]> = {}) =>
    app(fakeServer(), { publicKeys, ...extra });

  it('accepts a genuine file of this licence and machine, with its entitlements', async () => {
    await expect(offline().verifyOffline(file(), { now: NOW })).resolves.toEqual({
      valid: true,
      license: expect.objectContaining({ license_key: KEY, fingerprint: 'box-1' }),
      entitlements: ['pdf-export'],
    });
    // The key as a person typed it (lower case, O for 0) names the same licence.
    const typed = offline({ licenseKey: KEY.toLowerCase().replace('0', 'o') });
    await expect(typed.verifyOffline(file(), { now: NOW })).resolves.toMatchObject({ valid: true });
    await expect(
      offline({ publicKeys: { data: publicKeys } }).verifyOffline(file(), { now: NOW }),
    ).resolves.toMatchObject({ valid: true });
  });

  it('refuses a tampered payload, another machine, an expired file and another licence', async () => {
    const genuine = file();
    const tampered = {
      ...genuine,
      payload: Buffer.from(
        Buffer.from(genuine.payload, 'base64url').toString().replace('"pdf-export"', '"everything"'),
      ).toString('base64url'),
    };
    const licensed = offline();
    await expect(licensed.verifyOffline(tampered, { now: NOW })).resolves.toEqual({
      valid: false,
      reason: 'bad_signature',
      license: null,
      entitlements: [],
    });
    await expect(offline({ fingerprint: 'box-2' }).verifyOffline(genuine, { now: NOW })).resolves.toMatchObject({
      valid: false,
      reason: 'fingerprint_mismatch',
      entitlements: [],
    });
    await expect(licensed.verifyOffline(genuine, { now: NOW + 8 * DAY })).resolves.toMatchObject({
      valid: false,
      reason: 'expired',
    });
    await expect(
      licensed.verifyOffline(file({ license_key: 'ZZZZZ-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG' }), { now: NOW }),
    ).resolves.toMatchObject({ valid: false, reason: 'license_mismatch' });
    await expect(offline({ productId: 'prod_2' }).verifyOffline(genuine, { now: NOW })).resolves.toMatchObject({
      valid: false,
      reason: 'license_mismatch',
    });
    await expect(licensed.verifyOffline({ nonsense: true })).resolves.toMatchObject({
      valid: false,
      reason: 'malformed',
    });
  });

  it('matches an imported (foreign) key exactly, as the server does: no case, hyphen or look-alike forgiven', async () => {
    const uuid = '3f2b8c1e-7d4a-4e2b-9c1f-0a1b2c3d4e5f'; // a Lemon Squeezy key, kept as it was
    const foreign = offline({ licenseKey: uuid });
    const of = (key: string) => file({ license_key: key });
    await expect(foreign.verifyOffline(of(uuid), { now: NOW })).resolves.toMatchObject({ valid: true });
    await expect(offline({ licenseKey: ` ${uuid} ` }).verifyOffline(of(uuid), { now: NOW })).resolves.toMatchObject({
      valid: true,
    });
    for (const other of [uuid.toUpperCase(), uuid.replace(/-/g, ''), uuid.replace('0', 'O')])
      await expect(foreign.verifyOffline(of(other), { now: NOW })).resolves.toMatchObject({
        valid: false,
        reason: 'license_mismatch',
      });
  });

  it('needs the public keys, which is a bug in the app when missing', async () => {
    await expect(app(fakeServer()).verifyOffline(file())).rejects.toThrow(/publicKeys/);
  });
});
