import { Metrics, loadConfig, type ServiceContext } from '@licensing/runtime';
import type { ValidateLicenseRequest } from '@licensing/proto';
import { gatewaySchema } from '../../../../gateway/src/config';
import { licenseSchema, type LicenseConfig } from '../../src/config';
import { LicenseCache } from '../../src/caches/license-cache';
import { MAX_VALIDATIONS_PER_CALL } from '@licensing/proto';
import { validationHandlers } from '../../src/handlers/validation-handlers';
import type { ValidationCounter } from '../../src/jobs/validation-counter';
import { FakeBus, refusal } from '../../../../test/support/fakes/common';
import { licenseSetup } from '../../../../test/support/fakes/license-deps';

// What this change accepts from callers and operators, refused with errors that name it.

const call = { requestId: 'req_1', caller: 'gateway' as const, log: undefined as never };

async function setup() {
  const s = licenseSetup();
  const lic = await s.issued();
  const counter = { record() {}, validated() {}, addRecent() {} } as unknown as ValidationCounter;
  const ctx = { metrics: new Metrics('license'), clock: s.clock } as unknown as ServiceContext<LicenseConfig>;
  const licenses = new LicenseCache(s.store, new FakeBus(), 100, 60_000);
  const handlers = validationHandlers(ctx, { licenses, products: s.products, store: s.store, counter, clock: s.clock });
  const validation = (key: string) =>
    ({ account_id: 'acct_A', key, product_id: '', fingerprint: '', key_scope: 'full' }) as ValidateLicenseRequest;
  return { handlers, lic, validation, store: s.store };
}

describe('ValidateLicenses', () => {
  it(`refuses more than ${MAX_VALIDATIONS_PER_CALL} validations in one call, naming the field`, async () => {
    const { handlers, lic, validation } = await setup();
    const validations = Array.from({ length: MAX_VALIDATIONS_PER_CALL + 1 }, () => validation(lic.key));
    const err = await refusal(() =>
      handlers.validateLicenses({ validations, request_ids: [], traceparents: [] }, call),
    );
    expect(err.code).toBe('invalid_request');
    expect(err.message).toBe(`at most ${MAX_VALIDATIONS_PER_CALL} validations per call`);
    expect(err.fieldErrors.map((f) => f.field)).toEqual(['validations']);
  });

  it('answers each validation in order, whatever its request id (a malformed one is not used) and an empty call', async () => {
    const { handlers, lic, validation } = await setup();
    const out = await handlers.validateLicenses(
      {
        validations: [validation(lic.key), validation('NOT-A-KEY')],
        request_ids: ['bad id with spaces'],
        traceparents: ['not a traceparent'],
      },
      call,
    );
    expect(out.results.map((r) => r.code)).toEqual(['valid', 'not_found']);
    expect(await handlers.validateLicenses({ validations: [], request_ids: [], traceparents: [] }, call)).toEqual({
      results: [],
    });
  });
});

describe('what a validation shows of its licence', () => {
  it("to a validate-scope key: neither the vendor's metadata nor (by default) the customer's e-mail", async () => {
    const { handlers, lic, validation, store } = await setup();
    store.licenses.get(lic._id)!.metadata = { crm_id: 'C-77' };
    const { results } = await handlers.validateLicenses(
      {
        validations: [validation(lic.key), { ...validation(lic.key), key_scope: 'validate' }],
        request_ids: [],
        traceparents: [],
      },
      call,
    );
    expect(results.map((r) => r.code)).toEqual(['valid', 'valid']);
    expect(results[0].license).toMatchObject({ metadata: { crm_id: 'C-77' }, customer_email: lic.customer_email });
    expect([results[1].license!.metadata, results[1].license!.customer_email]).toEqual([{}, '']);
  });
});

describe('settings', () => {
  const base = { INTERNAL_TOKEN: 'x'.repeat(32), API_KEY_PEPPER: 'y'.repeat(32) };
  it.each([
    [gatewaySchema, 'GATEWAY_WORKERS', '0'],
    [gatewaySchema, 'GATEWAY_WORKERS', '65'],
    [gatewaySchema, 'GATEWAY_WORKERS', 'two'],
    [licenseSchema, 'LICENSE_CACHE_SIZE', '-1'],
    [licenseSchema, 'LICENSE_CACHE_TTL_MS', '60001'],
  ] as const)('%#: %s refuses %s=%s, naming it', (schema, name, value) => {
    expect(() => loadConfig(schema, { ...base, [name]: value })).toThrow(new RegExp(`${name} must`));
  });
});
