import { redactUrl } from '../../gateway/src/request-context';
import { pageShape, readQuery, toPage } from '../../gateway/src/validation';

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
  const page = (query: Record<string, unknown>) => toPage(readQuery({ query } as never, pageShape), 'prod');

  it('defaults to 20 and accepts 1..100', () => {
    expect(page({})).toEqual({ limit: 20, starting_after: '' });
    expect(page({ limit: '1' }).limit).toBe(1);
    expect(page({ limit: '100' }).limit).toBe(100);
  });

  it.each([['0'], ['101'], ['-5'], ['1e2'], [' 5'], [''], [['5', '6']]])('refuses limit=%p', (limit) => {
    expect(() => page({ limit })).toThrow(/^limit must be a whole number from 1 to 100$/);
  });

  it('refuses a cursor that is not an id of the listed kind', () => {
    expect(() => page({ starting_after: 'lic_01JD8Z3K6Q2W4E5R6T7Y8V9X0P' })).toThrow(/starting_after must be an id/);
  });
});
