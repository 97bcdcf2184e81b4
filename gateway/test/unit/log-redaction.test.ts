import { errorSummary, scrubSecrets } from '@licensing/runtime';
import { decodablePath } from '../../src/http/errors';
import { loggedUrl } from '@licensing/runtime';

const KEY = '7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V';

describe('what the access log names a request by', () => {
  it('a routed request: its template, never the licence key in its path', () => {
    expect(loggedUrl(`/api/v1/licenses/${KEY}/activations?limit=5`, '/api/v1/licenses/:key/activations')).toBe(
      '/api/v1/licenses/:key/activations?limit=5',
    );
    expect(loggedUrl(`/api/v1/licenses/validate?license_key=${KEY}`, '/api/v1/licenses/validate')).toBe(
      '/api/v1/licenses/validate?license_key=[redacted]',
    );
  });

  it('an unrouted one: its path with the key segment and secret shapes replaced, bounded', () => {
    expect(loggedUrl(`/api/v1/licenses/${KEY.toLowerCase()}/nothing`, undefined)).toBe(
      '/api/v1/licenses/[redacted]/nothing',
    );
    expect(loggedUrl(`/v1/licenses/${KEY.replace(/-/g, '')}%ED`, undefined)).toBe('/v1/licenses/[redacted]');
    expect(loggedUrl('/api/v1/licenses/validate/x', undefined)).toBe('/api/v1/licenses/validate/x');
    expect(loggedUrl(`/api/v1/x/${KEY}`, undefined)).toBe('/api/v1/x/[redacted]');
    expect(loggedUrl(`/${'a'.repeat(1000)}`, undefined).length).toBeLessThanOrEqual(200);
  });

  it('an imported key (any shape) in a dashboard, portal or API path: every licence-key segment is replaced', () => {
    // Keygen-style hex, a Lemon Squeezy UUID, a short vendor key: none has the native shape scrubSecrets knows.
    for (const imported of ['A1B2C3D4E5F60718', '0f8fad5b-d9cb-469f-a165-70867728950e', 'SHORT-KEY-42']) {
      expect(loggedUrl(`/dashboard/licenses/${imported}`, undefined)).toBe('/dashboard/licenses/[redacted]');
      expect(loggedUrl(`/dashboard/licenses/${imported}/reroll?x=1`, undefined)).toBe(
        '/dashboard/licenses/[redacted]/reroll?x=1',
      );
      expect(loggedUrl(`/dashboard/licenses/${imported}/activations/act_1/deactivate`, undefined)).toBe(
        '/dashboard/licenses/[redacted]/activations/act_1/deactivate',
      );
      expect(loggedUrl(`/portal/acct_1/licenses/${encodeURIComponent(imported)}/file`, undefined)).toBe(
        '/portal/acct_1/licenses/[redacted]/file',
      );
      expect(loggedUrl(`/api/v1/licenses/${imported}`, undefined)).toBe('/api/v1/licenses/[redacted]');
    }
    // The fixed routes in that place are not keys.
    expect(loggedUrl('/dashboard/licenses/batch', undefined)).toBe('/dashboard/licenses/batch');
    expect(loggedUrl('/dashboard/licenses?q=x', undefined)).toBe('/dashboard/licenses?q=[redacted]');
  });
});

describe('secret shapes in any log line', () => {
  it('API keys, webhook secrets and licence keys in any case or percent-encoded', () => {
    expect(scrubSecrets('Bearer lk_full_abcDEF123 and lk_val_XyZ')).toBe('Bearer [redacted] and [redacted]');
    expect(scrubSecrets('secret whsec_abc/+=9')).toBe('secret [redacted]');
    // Connection URLs carry each component's own database and Redis passwords: the user stays, the password goes.
    expect(
      scrubSecrets(
        'cannot reach mongodb://account:s3cret@mongodb:27017/licensing_account or redis://gateway:p%40ss@redis:6379',
      ),
    ).toBe(
      'cannot reach mongodb://account:[redacted]@mongodb:27017/licensing_account or redis://gateway:[redacted]@redis:6379',
    );
    expect(scrubSecrets('http://127.0.0.1:8081/checkout nats://nats:4222')).toBe(
      'http://127.0.0.1:8081/checkout nats://nats:4222',
    );
    expect(scrubSecrets(`/licenses/${KEY}/x ${KEY.toLowerCase()} ${KEY.replace(/-/g, '%2D')}`)).toBe(
      '/licenses/[redacted]/x [redacted] [redacted]',
    );
    expect(
      scrubSecrets('req_0123456789abcdef00000001 2024-11-14T10:00:00.000Z 123e4567-e89b-12d3-a456-426614174000'),
    ).toBe('req_0123456789abcdef00000001 2024-11-14T10:00:00.000Z 123e4567-e89b-12d3-a456-426614174000');
  });

  it('an error keeps its kind, loses its secrets', () => {
    const e = errorSummary(new URIError(`Failed to decode param '${KEY}%ED'`));
    expect(e.type).toBe('URIError');
    expect(e.message).not.toContain(KEY);
    expect(e.stack).not.toContain(KEY);
  });
});

describe('malformed URLs', () => {
  it('a path decodes or it does not', () => {
    expect(decodablePath('/api/v1/products/prod_x')).toBe(true);
    expect(decodablePath('/api/v1/products/%C3%A9')).toBe(true);
    for (const bad of ['%ED%A0%80', '%E2%82', '%', '%zz', '%C0%AF'])
      expect(decodablePath(`/api/v1/products/${bad}`)).toBe(false);
  });
});
