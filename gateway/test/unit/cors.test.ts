import { corsHeaders, corsPolicyOf, preflightHeaders } from '../../src/auth/cors';

// The pure parts of the gateway's CORS (gateway/src/auth/cors.ts); gateway/test/component/cors.test.ts sends real requests.

describe('CORS_ALLOWED_ORIGINS', () => {
  it('is empty (none), "*" (any), or origins', () => {
    expect(corsPolicyOf('')).toEqual({ kind: 'none' });
    expect(corsPolicyOf(' , ')).toEqual({ kind: 'none' });
    expect(corsPolicyOf('*')).toEqual({ kind: 'any' });
    const listed = corsPolicyOf('https://app.example.com, http://localhost:5173/');
    expect(listed).toEqual({ kind: 'listed', origins: new Set(['https://app.example.com', 'http://localhost:5173']) });
  });

  it.each([
    'https://app.example.com/path',
    'app.example.com',
    'ftp://files.example.com',
    '*, https://a.example.com',
    'https://a.example.com?x=1',
  ])('refuses %s, naming it', (setting) => {
    expect(() => corsPolicyOf(setting)).toThrow(/CORS_ALLOWED_ORIGINS: ".*" is not an origin/);
  });
});

describe('which answers carry CORS headers', () => {
  const listed = corsPolicyOf('https://app.example.com');
  const any = corsPolicyOf('*');
  const none = corsPolicyOf('');

  it('an app route from an allowed origin: the origin itself, with Vary; any origin: "*" without Vary', () => {
    expect(corsHeaders(listed, 'https://app.example.com', 'GET', '/api/v1/licenses/validate')).toEqual(
      expect.objectContaining({ 'Access-Control-Allow-Origin': 'https://app.example.com', Vary: 'Origin' }),
    );
    const anyHeaders = corsHeaders(any, 'https://x.example.com', 'POST', '/api/v1/keys/validate');
    expect(anyHeaders?.['Access-Control-Allow-Origin']).toBe('*');
    expect(anyHeaders?.Vary).toBeUndefined();
  });

  it.each([
    [listed, 'https://evil.example.com', 'GET', '/api/v1/licenses/validate'],
    [none, 'https://app.example.com', 'GET', '/api/v1/licenses/validate'],
    [listed, undefined, 'GET', '/api/v1/licenses/validate'],
    [any, 'https://app.example.com', 'GET', '/api/v1/products'],
    [any, 'https://app.example.com', 'POST', '/api/v1/licenses'],
    [any, 'https://app.example.com', 'PATCH', '/api/v1/licenses/LK-1'],
  ])('none for %#: another origin, CORS off, no Origin, or a vendor route', (policy, origin, method, path) => {
    expect(corsHeaders(policy, origin, method, path)).toBeNull();
  });

  it('a preflight names the methods of the path, and refuses one the path does not have', () => {
    const path = '/api/v1/licenses/LK-1/activations/act_1';
    expect(preflightHeaders(listed, 'https://app.example.com', 'delete', path)?.['Access-Control-Allow-Methods']).toBe(
      'DELETE',
    );
    expect(preflightHeaders(listed, 'https://app.example.com', 'PATCH', path)).toBeNull();
    expect(preflightHeaders(listed, 'https://evil.example.com', 'DELETE', path)).toBeNull();
  });
});
