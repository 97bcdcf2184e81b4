import { AppError } from '@licensing/runtime';
import { EXAMPLE_LICENSE_KEY, generateLicenseKey } from '@licensing/proto';
import { APP_ROUTES, appRouteOf, checkAppRequest, checkOwnLicense, sameLicense } from '../../src/auth/app-routes';
import { credentialOrRefusal, licenseCredential } from '../../src/auth/credential';
import { licenseDigest, namedLicenseDigest, unknownLicense } from '../../src/auth/license-credentials';
import type { Principal } from '../../src/auth/principal';
import { limitsFor, rejectionDetail } from '@licensing/runtime';
import { rateLimitHeaders } from '@licensing/runtime';
import { readFastRequest } from '../../src/license-validation/fast-path-request';

const KEY = EXAMPLE_LICENSE_KEY;
const OTHER = generateLicenseKey();

const licence = (status: 'active' | 'suspended' | 'revoked' = 'active'): Principal => ({
  accountId: 'acct_1',
  plan: 'pro',
  perMinuteOverride: 0,
  perHourOverride: 0,
  keyId: 'lic_1',
  scope: 'validate',
  credential: 'license',
  license: { key: KEY, digest: licenseDigest(KEY), id: 'lic_1', productId: 'prod_1', status },
});
const validateKey: Principal = { ...licence(), keyId: 'key_1', credential: 'api_key', license: undefined };
const fullKey: Principal = { ...validateKey, scope: 'full' };

/** The AppError code a check throws, or 'ok'. */
function outcome(check: () => void): string {
  try {
    check();
    return 'ok';
  } catch (err) {
    if (err instanceof AppError) return err.code;
    throw err;
  }
}
const request = (p: Principal, method: string, path: string, query: Record<string, unknown> = {}) =>
  outcome(() => checkAppRequest(p, method, path, query));

describe('the Authorization header', () => {
  it('reads "Bearer <API key>" and "License <licence key>" (normalised to the canonical key)', () => {
    expect(credentialOrRefusal('Bearer lk_full_abc')).toEqual({ kind: 'api_key', token: 'lk_full_abc' });
    expect(credentialOrRefusal(`License ${KEY}`)).toEqual({ kind: 'license', key: KEY });
    expect(credentialOrRefusal(`License ${KEY.toLowerCase().replace(/-/g, '')}`)).toEqual({
      kind: 'license',
      key: KEY,
    });
  });

  it.each([
    undefined,
    '',
    'License',
    'License ',
    'License  two-spaces',
    'License not!a!key',
    `License ${KEY.slice(0, -1)}${KEY.endsWith('0') ? '1' : '0'}`,
    `License ${KEY} trailing`,
    `License ${'A'.repeat(65)}`,
    `license ${KEY}`,
    'Basic YTpi',
  ])('refuses %p with a 401 that says what to send', (header) => {
    let err: unknown;
    try {
      credentialOrRefusal(header);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('unauthorized');
    expect((err as AppError).message).toMatch(/License/);
  });

  it('a weak imported key is no License credential: 401 saying why, judged on the key alone', () => {
    for (const [sent, why] of [
      ['SHORT-KEY-42', /12 characters, fewer than the 16/],
      ['1234567890123456', /estimated 53 bits, fewer than the 80/],
    ] as const) {
      let refusal: AppError | undefined;
      try {
        credentialOrRefusal(`License ${sent}`);
      } catch (err) {
        refusal = err as AppError;
      }
      expect(refusal).toBeInstanceOf(AppError);
      expect(refusal!.code).toBe('unauthorized');
      expect(refusal!.message).toMatch(why);
      expect(refusal!.message).toMatch(/imported from another system.*reroll/);
    }
    expect(credentialOrRefusal('License 0f8fad5b-d9cb-469f-a165-70867728950e')).toEqual({
      kind: 'license',
      key: '0f8fad5b-d9cb-469f-a165-70867728950e',
    });
  });

  it('the fast path reads the same License credential, and declines what it cannot read', () => {
    expect(licenseCredential(`License ${KEY}`)).toBe(KEY);
    expect(licenseCredential(`Bearer ${KEY}`)).toBeUndefined();
    const read = readFastRequest('GET', `/api/v1/licenses/validate?license_key=${KEY}`, [
      'Authorization',
      `License ${KEY}`,
    ]);
    expect(read).toMatchObject({ license: KEY, apiKey: '', licenseKey: KEY });
    expect(readFastRequest('GET', `/api/v1/licenses/validate?license_key=${KEY}`, ['Authorization', 'License'])).toBe(
      'authorization',
    );
  });
});

describe('the app routes', () => {
  it('match the method and path, with the key or product the path names', () => {
    expect(appRouteOf('GET', '/api/v1/licenses/validate')?.route.namedIn).toBe('query');
    expect(appRouteOf('POST', '/api/v1/keys/validate')?.route.namedIn).toBe('body');
    expect(appRouteOf('GET', `/api/v1/licenses/${KEY}`)).toMatchObject({ key: KEY });
    expect(appRouteOf('DELETE', `/api/v1/licenses/${KEY}/activations/act_1`)).toMatchObject({ key: KEY });
    expect(appRouteOf('POST', `/api/v1/licenses/${KEY}/activations/act_1/heartbeat`)).toMatchObject({ key: KEY });
    expect(appRouteOf('GET', '/api/v1/products/prod_9/signing-keys')).toMatchObject({ productId: 'prod_9' });
    expect(appRouteOf('GET', `/api/v1/licenses/${KEY.replace('-', '%2D')}`)).toMatchObject({ key: KEY });
    for (const [method, path] of [
      ['GET', '/api/v1/licenses'],
      ['PATCH', `/api/v1/licenses/${KEY}`],
      ['POST', `/api/v1/licenses/${KEY}/revoke`],
      ['POST', '/api/v1/products/prod_1/signing-keys/rotate'],
      ['POST', '/api/v1/licenses/validate'],
      ['GET', '/api/v1/licenses/%E2%82'],
      ['GET', '/api/v1/status'],
      ['HEAD', '/api/v1/licenses/validate'],
    ])
      expect([method, path, appRouteOf(method, path)]).toEqual([method, path, undefined]);
    expect(appRouteOf('POST', `/api/v1/licenses/${KEY}/seat-rescue`)).toMatchObject({ key: KEY });
    expect(appRouteOf('DELETE', '/api/v1/customers/a%40example.com')).toBeUndefined();
    // Release files and the three update feeds: judged by their routes, the key also taken from the query.
    const release = appRouteOf('GET', '/api/v1/releases/rel_1/artifacts/App%201.0.dmg');
    expect(release).toMatchObject({ route: { namedIn: 'release', keyInQuery: true, judged: true } });
    expect(appRouteOf('GET', '/api/v1/products/prod_1/updates/tauri/darwin/aarch64/1.0.0')).toMatchObject({
      productId: 'prod_1',
      route: { judged: true },
    });
    expect(appRouteOf('GET', '/api/v1/products/prod_1/appcast.xml')).toMatchObject({ productId: 'prod_1' });
    expect(appRouteOf('PUT', '/api/v1/releases/rel_1/artifacts/a.zip')).toBeUndefined();
    expect(APP_ROUTES).toHaveLength(14);
  });

  it('a licence acts on its own licence and product only: another is 404, any other route 403', () => {
    const p = licence();
    expect(request(p, 'GET', '/api/v1/licenses/validate', { license_key: KEY.toLowerCase() })).toBe('ok');
    expect(request(p, 'GET', '/api/v1/licenses/validate', { license_key: OTHER })).toBe('not_found');
    expect(request(p, 'GET', `/api/v1/licenses/${KEY}/activations`)).toBe('ok');
    expect(request(p, 'GET', `/api/v1/licenses/${OTHER}/activations`)).toBe('not_found');
    expect(request(p, 'GET', '/api/v1/licenses/not-a-key')).toBe('not_found');
    expect(request(p, 'GET', '/api/v1/products/prod_1/signing-keys')).toBe('ok');
    expect(request(p, 'GET', '/api/v1/products/prod_2/signing-keys')).toBe('not_found');
    expect(request(p, 'GET', '/api/v1/licenses')).toBe('forbidden');
    expect(request(p, 'GET', '/api/v1/status')).toBe('forbidden');
    expect(request(p, 'POST', `/api/v1/licenses/${KEY}/revoke`)).toBe('forbidden');
    expect(outcome(() => checkOwnLicense(p, OTHER))).toBe('not_found');
    expect(outcome(() => checkOwnLicense(p, KEY))).toBe('ok');
  });

  it.each(['suspended', 'revoked'] as const)('a %s licence only validates (401 elsewhere)', (status) => {
    const p = licence(status);
    expect(request(p, 'GET', '/api/v1/licenses/validate', { license_key: KEY })).toBe('ok');
    expect(request(p, 'POST', '/api/v1/keys/validate')).toBe('ok');
    expect(request(p, 'GET', `/api/v1/licenses/${KEY}`)).toBe('unauthorized');
    expect(request(p, 'GET', '/api/v1/licenses')).toBe('unauthorized');
  });

  it('an unknown licence only validates', () => {
    const p = unknownLicense(KEY, licenseDigest(KEY));
    expect(request(p, 'GET', '/api/v1/licenses/validate', { license_key: KEY })).toBe('ok');
    expect(request(p, 'POST', `/api/v1/licenses/${KEY}/file`)).toBe('unauthorized');
  });

  it('a validate-scope key calls the app routes for any licence (its account is checked by the services) and status; full keys everything', () => {
    expect(request(validateKey, 'GET', `/api/v1/licenses/${OTHER}/activations`)).toBe('ok');
    expect(request(validateKey, 'GET', '/api/v1/status')).toBe('ok');
    expect(request(validateKey, 'GET', '/api/v1/licenses')).toBe('forbidden');
    expect(request(fullKey, 'GET', '/api/v1/licenses')).toBe('ok');
    expect(outcome(() => checkOwnLicense(validateKey, OTHER))).toBe('ok');
  });

  it('compares licence keys by their canonical form', () => {
    expect(sameLicense(KEY, KEY.toLowerCase())).toBe(true);
    expect(sameLicense(KEY, ` ${KEY.replace(/-/g, '')} `)).toBe(true);
    expect(sameLicense(KEY, OTHER)).toBe(false);
    expect(sameLicense(KEY, 'x')).toBe(false);
  });
});

describe('the per-licence budget', () => {
  it('is 60 a minute by default, or the setting', () => {
    expect(limitsFor({ plan: 'free', perMinuteOverride: 0, perHourOverride: 0 }).licenseMinute).toBe(60);
    expect(limitsFor({ plan: 'free', perMinuteOverride: 0, perHourOverride: 0 }, 5).licenseMinute).toBe(5);
  });

  it('one licence spends one budget however it is spelled', () => {
    expect(namedLicenseDigest(KEY.toLowerCase())).toBe(licenseDigest(KEY));
    expect(namedLicenseDigest('garbage')).not.toBe(licenseDigest(KEY));
  });

  it('is named "license_minute" in the headers and the 429', () => {
    const h = rateLimitHeaders(
      [
        { name: 'app_hour', limit: 1000, windowS: 3600, remaining: 900, resetS: 3000 },
        { name: 'license_minute', limit: 60, windowS: 60, remaining: 0, resetS: 12 },
      ],
      0,
    );
    expect(h['RateLimit-Policy']).toBe('"app_hour";q=1000;w=3600, "license_minute";q=60;w=60');
    expect(h.RateLimit).toBe('"license_minute";r=0;t=12');
    expect(
      rejectionDetail({ name: 'license_minute', limit: 60, windowS: 60, remaining: 0, resetS: 12 }, 'pro'),
    ).toMatch(/60 requests for this licence.*retry in 12 s/);
  });
});
