import { redactUrl } from '../../gateway/src/request-context';
import { toPage } from '../../gateway/src/validation';

describe('access-log redaction', () => {
  it('removes licence keys from query strings', () => {
    expect(redactUrl('/api/v1/licenses/validate?license_key=ABCDE-12345&x=1')).toBe(
      '/api/v1/licenses/validate?license_key=[redacted]&x=1',
    );
    expect(redactUrl('/v1/licenses/validate?x=1&LICENSE_KEY=abc')).toBe(
      '/v1/licenses/validate?x=1&LICENSE_KEY=[redacted]',
    );
    expect(redactUrl('/dashboard/licenses?q=ABCDE-12345')).toBe('/dashboard/licenses?q=[redacted]');
    expect(redactUrl('/api/v1/licenses?limit=5&customer_email=a%40b.co')).toBe(
      '/api/v1/licenses?limit=5&customer_email=[redacted]',
    );
    expect(redactUrl('/api/v1/products?limit=5')).toBe('/api/v1/products?limit=5');
  });
});

describe('list parameters', () => {
  it('defaults to 20 and accepts 1..100', () => {
    expect(toPage({}, 'prod')).toEqual({ limit: 20, startingAfter: '' });
    expect(toPage({ limit: '1' }, 'prod').limit).toBe(1);
    expect(toPage({ limit: '100' }, 'prod').limit).toBe(100);
  });

  it.each([['0'], ['101'], ['-5'], ['1e2'], [' 5'], ['']])('refuses limit=%p', (limit) => {
    expect(() => toPage({ limit }, 'prod')).toThrow(/limit must be an integer from 1 to 100/);
  });
});
