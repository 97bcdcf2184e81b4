import { bearerKey, bearerKeyOrRefusal, MAX_API_KEY_LENGTH } from '../../src/auth/bearer';
import { isSecure, readFastRequest } from '../../src/license-validation/fast-path-request';
import { licenseValidateQuery } from '../../src/request-shapes/operations';

// What the validation fast path reads of a request and what it leaves to Express. Each request it
// accepts must be one Express answers the same way (test/e2e/fast-path-parity.test.ts compares the
// answers); each it declines goes to Express untouched.

const KEY = 'LK-ABCD-EFGH-JKLM-NPQR-STUV-WXYZ';
const AUTH = ['Authorization', 'Bearer lk_full_secret'];
const read = (url: string, headers: string[] = AUTH, method = 'GET') => readFastRequest(method, url, headers);

describe('the fast path accepts', () => {
  it('a GET of /api/v1/licenses/validate or /v1/… with license_key, and fingerprint if sent; what it hands on', () => {
    expect(read(`/api/v1/licenses/validate?license_key=${KEY}`)).toEqual({
      licenseKey: KEY,
      fingerprint: '',
      apiKey: 'lk_full_secret',
      forwardedProto: undefined,
      requestId: undefined,
    });
    expect(read(`/v1/licenses/validate?fingerprint=m-1.a_b~c&license_key=${KEY}`)).toMatchObject({
      licenseKey: KEY,
      fingerprint: 'm-1.a_b~c',
    });
    // An empty fingerprint is Express's too ('' passes the query shape): no machine.
    expect(read(`/api/v1/licenses/validate?license_key=${KEY}&fingerprint=`)).toMatchObject({ fingerprint: '' });
  });

  it('any licence key text that needs no decoding, up to the query shape limits (a malformed key is judged, not refused)', () => {
    const longest = 'K'.repeat(licenseValidateQuery.license_key.max);
    expect(read(`/api/v1/licenses/validate?license_key=${longest}`)).toMatchObject({ licenseKey: longest });
    expect(read('/api/v1/licenses/validate?license_key=not-a-key')).toMatchObject({ licenseKey: 'not-a-key' });
    const machine = 'm'.repeat(licenseValidateQuery.fingerprint.max);
    expect(read(`/api/v1/licenses/validate?license_key=${KEY}&fingerprint=${machine}`)).toMatchObject({
      fingerprint: machine,
    });
  });

  it('header names in any case, headers it does not read, a Content-Length of 0; X-Request-Id and X-Forwarded-Proto as sent', () => {
    const headers = [
      'AUTHORIZATION',
      'Bearer lk_validate_x',
      'x-REQUEST-id',
      'not sane, but Express makes a new one too',
      'X-Forwarded-Proto',
      'https, http',
      'Accept',
      'text/html',
      'Cookie',
      'a=b',
      'Content-Length',
      '0',
    ];
    expect(read(`/api/v1/licenses/validate?license_key=${KEY}`, headers)).toEqual({
      licenseKey: KEY,
      fingerprint: '',
      apiKey: 'lk_validate_x',
      requestId: 'not sane, but Express makes a new one too',
      forwardedProto: 'https, http',
    });
  });
});

describe('the fast path leaves to Express', () => {
  it.each([
    ['HEAD', `/api/v1/licenses/validate?license_key=${KEY}`],
    ['OPTIONS', `/api/v1/licenses/validate?license_key=${KEY}`],
    ['POST', `/api/v1/licenses/validate?license_key=${KEY}`],
    ['GET', '/api/v1/licenses/validate'],
    ['GET', `/api/v1/licenses/validate/?license_key=${KEY}`],
    ['GET', `/API/V1/LICENSES/VALIDATE?license_key=${KEY}`],
    ['GET', `/api/v1/licenses/validatex?license_key=${KEY}`],
    ['GET', `/api/v1/keys/validate?license_key=${KEY}`],
  ])('other routes and methods: %s %s', (method, url) => {
    expect(read(url, AUTH, method)).toBe('route');
  });

  it.each([
    '',
    'fingerprint=m1',
    'license_key=',
    `license_key=${'K'.repeat(licenseValidateQuery.license_key.max + 1)}`,
    `license_key=${KEY}&fingerprint=${'m'.repeat(licenseValidateQuery.fingerprint.max + 1)}`,
    `license_key=${KEY}&license_key=${KEY}`,
    `license_key=${KEY}&fingerprint=a&fingerprint=b`,
    `license_key=${KEY}&product_id=prod_1`,
    `license_key=${KEY}&`,
    `license_key=${KEY}&fingerprint`,
    `license_key=LK%2DABCD`,
    `license_key=${KEY}&fingerprint=a+b`,
    `license_key=${KEY}&fingerprint=a%20b`,
    `license_key=${KEY}#part`,
    `license%5Fkey=${KEY}`,
  ])('a query Express must decode or judge: ?%s', (query) => {
    expect(read(`/api/v1/licenses/validate?${query}`)).toBe('query');
  });

  it('a browser page’s call (an Origin) is left to Express, which decides its CORS headers', () => {
    expect(read(`/api/v1/licenses/validate?license_key=${KEY}`, [...AUTH, 'Origin', 'https://app.example.com'])).toBe(
      'cross-origin',
    );
  });

  it.each([
    [['Authorization', 'Bearer lk_a', 'authorization', 'Bearer lk_a']],
    [['Authorization', 'Bearer lk_a', 'authorization', 'Bearer lk_wrong']],
    [[...AUTH, 'X-Request-Id', 'a', 'x-request-id', 'b']],
    [[...AUTH, 'X-Forwarded-Proto', 'https', 'x-forwarded-proto', 'http']],
    [[...AUTH, 'Content-Length', '0', 'content-length', '0']],
  ])('a header it reads, sent twice (node:http merges or drops the second for Express): %j', (headers) => {
    expect(read(`/api/v1/licenses/validate?license_key=${KEY}`, headers)).toBe('header twice');
  });

  it.each([
    [['Content-Length', '5', 'Content-Type', 'text/plain']],
    [['Content-Length', '2', 'Content-Type', 'application/json']],
    [['Transfer-Encoding', 'chunked']],
  ])('a body, whose type Express checks and which it parses (415, 400, 413): %j', (headers) => {
    expect(read(`/api/v1/licenses/validate?license_key=${KEY}`, [...AUTH, ...headers])).toBe('body');
  });

  it.each([
    [[]],
    [['Authorization', '']],
    [['Authorization', 'bearer lk_a']],
    [['Authorization', 'Bearer  lk_a']],
    [['Authorization', 'Bearer lk_a b']],
    [['Authorization', 'Bearer']],
    [['Authorization', 'Basic bGs6YQ==']],
    [['Authorization', `Bearer ${'k'.repeat(MAX_API_KEY_LENGTH + 1)}`]],
  ])('no "Authorization: Bearer <key>" (Express answers 401 and counts the failure): %j', (headers) => {
    expect(read(`/api/v1/licenses/validate?license_key=${KEY}`, headers)).toBe('authorization');
  });
});

describe('the Bearer rule', () => {
  it('is the one Express applies: a key the fast path reads is one Express accepts, and the rest get its 401', () => {
    const headers = [
      undefined,
      '',
      'Bearer lk_a',
      'bearer lk_a',
      'Bearer  lk_a',
      'Bearer lk_a ',
      `Bearer ${'k'.repeat(MAX_API_KEY_LENGTH)}`,
      `Bearer ${'k'.repeat(MAX_API_KEY_LENGTH + 1)}`,
    ];
    for (const header of headers) {
      const key = bearerKey(header);
      if (key === undefined)
        expect(() => bearerKeyOrRefusal(header)).toThrow(expect.objectContaining({ code: 'unauthorized' }));
      else expect(bearerKeyOrRefusal(header)).toBe(key);
    }
  });
});

describe('HTTPS, as express reads req.secure', () => {
  const trusted = (address: string) => address === '10.0.0.1';

  it('is the connection itself unless a trusted proxy says otherwise in X-Forwarded-Proto (its first value)', () => {
    expect(isSecure(true, '192.0.2.1', undefined, trusted)).toBe(true);
    expect(isSecure(false, '192.0.2.1', undefined, trusted)).toBe(false);
    expect(isSecure(false, '192.0.2.1', 'https', trusted)).toBe(false); // not a trusted proxy
    expect(isSecure(true, '192.0.2.1', 'http', trusted)).toBe(true);
    expect(isSecure(false, '10.0.0.1', 'https', trusted)).toBe(true);
    expect(isSecure(false, '10.0.0.1', ' https , http', trusted)).toBe(true);
    expect(isSecure(false, '10.0.0.1', 'http, https', trusted)).toBe(false);
    expect(isSecure(false, '10.0.0.1', 'HTTPS', trusted)).toBe(false);
    // TLS from a trusted proxy that says the client came in clear text: not secure (no HSTS; 426 in production).
    expect(isSecure(true, '10.0.0.1', 'http', trusted)).toBe(false);
    // An empty header counts as none.
    expect(isSecure(true, '10.0.0.1', '', trusted)).toBe(true);
    expect(isSecure(false, '10.0.0.1', '', trusted)).toBe(false);
  });
});
