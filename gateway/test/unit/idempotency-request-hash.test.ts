import { AppError } from '@licensing/runtime';
import { requestHashOf } from '../../src/routes/idempotency-keys';

const nested = (depth: number) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`);

describe('the digest of a request under an Idempotency-Key', () => {
  it('is the same for the same request and differs for another body', () => {
    const one = requestHashOf(['POST', '/products', {}, { name: 'A' }]);
    expect(requestHashOf(['POST', '/products', {}, { name: 'A' }])).toBe(one);
    expect(requestHashOf(['POST', '/products', {}, { name: 'B' }])).not.toBe(one);
  });

  it('refuses a body nested past what JSON.stringify can walk with 400 body, never a 500', () => {
    let thrown: unknown;
    try {
      requestHashOf(['POST', '/subscriptions/sub_1/cancel', {}, nested(7500)]);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).code).toBe('invalid_request');
    expect((thrown as AppError).fieldErrors.map((f) => f.field)).toEqual(['body']);
  });
});
