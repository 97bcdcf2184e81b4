import type {
  ValidateLicenseRequest,
  ValidateLicenseResponse,
  ValidateLicensesRequest,
  ValidateLicensesResponse,
} from '@licensing/proto';
import { AppError, currentRequestId, withRequestId } from '@licensing/runtime';
import { MAX_BATCH, ValidationBatcher } from '../../src/license-validation/lookup-batch';

// The gateway's batching of licence-service look-ups (pure logic over a fake licence service).

const req = (key: string) => ({ account_id: 'acct_a', key }) as ValidateLicenseRequest;
const answerFor = (key: string) => ({ valid: true, code: `valid:${key}` }) as ValidateLicenseResponse;

class FakeLicenses {
  singles: { key: string; requestId?: string }[] = [];
  batches: ValidateLicensesRequest[] = [];
  failBatches?: AppError;
  short = false;
  async validateLicense(r: ValidateLicenseRequest): Promise<ValidateLicenseResponse> {
    this.singles.push({ key: r.key, requestId: currentRequestId() });
    return answerFor(r.key);
  }
  async validateLicenses(r: ValidateLicensesRequest): Promise<ValidateLicensesResponse> {
    this.batches.push(r);
    if (this.failBatches) throw this.failBatches;
    const results = r.validations.map((v) => answerFor(v.key));
    return { results: this.short ? results.slice(1) : results };
  }
}

function setup() {
  const licenses = new FakeLicenses();
  const batcher = new ValidationBatcher(licenses);
  /** Validations made in one turn, each in its own request's scope. */
  const together = (keys: string[]) =>
    Promise.allSettled(keys.map((k) => withRequestId(`req-${k}`, () => batcher.validate(req(k)))));
  return { licenses, batcher, together };
}

it('a validation alone in its turn is one ValidateLicense call, in its request scope', async () => {
  const { licenses, batcher } = setup();
  expect(await withRequestId('req-1', () => batcher.validate(req('K1')))).toEqual(answerFor('K1'));
  expect(licenses.singles).toEqual([{ key: 'K1', requestId: 'req-1' }]);
  expect(licenses.batches).toHaveLength(0);
});

it('validations in one turn go in one ValidateLicenses call, each answered with its own result and request id', async () => {
  const { licenses, together } = setup();
  const out = await together(['K1', 'K2', 'K3']);
  expect(out.map((o) => (o as PromiseFulfilledResult<ValidateLicenseResponse>).value)).toEqual(
    ['K1', 'K2', 'K3'].map(answerFor),
  );
  expect(licenses.batches).toHaveLength(1);
  expect(licenses.batches[0].request_ids).toEqual(['req-K1', 'req-K2', 'req-K3']);
  expect(licenses.singles).toHaveLength(0);
});

it(`never sends more than ${MAX_BATCH} in one call`, async () => {
  const { licenses, together } = setup();
  const keys = Array.from({ length: MAX_BATCH * 2 + 1 }, (_, i) => `K${i}`);
  const out = await together(keys);
  expect(out.every((o) => o.status === 'fulfilled')).toBe(true);
  expect(licenses.batches.map((b) => b.validations.length)).toEqual([MAX_BATCH, MAX_BATCH]);
  expect(licenses.singles.map((s) => s.key)).toEqual([`K${MAX_BATCH * 2}`]);
});

it('a batch the service could not take (an older replica, an outage) is tried again call by call', async () => {
  const { licenses, together } = setup();
  licenses.failBatches = new AppError('service_unavailable', 'a backing service is unavailable');
  const out = await together(['K1', 'K2']);
  expect(out.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled']);
  expect(licenses.singles).toEqual([
    { key: 'K1', requestId: 'req-K1' },
    { key: 'K2', requestId: 'req-K2' },
  ]);
});

it('any other failure fails every validation of the batch, and so does an answer with a different count', async () => {
  const { licenses, together } = setup();
  licenses.failBatches = new AppError('invalid_request', 'bad');
  const failed = await together(['K1', 'K2']);
  expect(failed.map((o) => o.status)).toEqual(['rejected', 'rejected']);
  expect(licenses.singles).toHaveLength(0);
  licenses.failBatches = undefined;
  licenses.short = true;
  const short = await together(['K1', 'K2']);
  expect(short.map((o) => o.status)).toEqual(['rejected', 'rejected']);
  expect((short[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'internal' });
});
