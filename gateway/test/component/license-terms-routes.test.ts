import { AppError, newId } from '@licensing/runtime';
import {
  DEFAULT_POLICY,
  License,
  generateLicenseKey,
  policyRules,
  policyToContract,
  type CreateLicenseRequest,
  type LicenseOverrides,
  type UpdateLicenseRequest,
} from '@licensing/proto';
import { type GatewayOverFakes, startGatewayOverFakes } from './gateway-over-fakes';

// The REST face of per-licence terms (docs/api.md, "Per-licence terms"): what POST and PATCH
// /api/v1/licenses send the licence service for expires_at, max_activations, lease_seconds and
// deactivate_excess (null kept apart from absent), how a licence's overrides are shown, and the
// shapes refused before the service is asked (400 naming the field, the policy rule's ranges). The
// licence service answers with the overrides it was sent here; what it decides itself (effective
// policy, renewal, freeing the longest-unseen machines): services/license/test/component/license-terms.test.ts.

let gw: GatewayOverFakes;

/** A licence as the licence service answers one, with these overrides (max 5 in its effective policy). */
const answered = (accountId: string, productId: string, overrides: LicenseOverrides | undefined) =>
  License.fromPartial({
    id: newId('lic'),
    account_id: accountId,
    product_id: productId,
    key: generateLicenseKey(),
    customer_email: 'terms@example.com',
    status: 'active',
    created_at: new Date().toISOString(),
    policy: policyToContract({ ...DEFAULT_POLICY, max_activations: 5 }),
    overrides,
  });

beforeAll(async () => {
  gw = await startGatewayOverFakes({
    license: {
      createLicense: (req: CreateLicenseRequest) => answered(req.account_id, req.product_id, req.overrides),
      updateLicense: (req: UpdateLicenseRequest) => {
        if (req.deactivate_excess !== true && req.overrides?.max_activations?.value === 1)
          throw new AppError('conflict', 'max_activations 1 is below the 2 machines this licence is active on');
        return answered(req.account_id, newId('prod'), req.overrides);
      },
    },
  });
});

afterAll(async () => {
  await gw?.stop();
});

const api = (method: string, path: string, body?: unknown) => gw.request(method, path, body);
const lastAsked = (method: 'createLicense' | 'updateLicense') => gw.peers.license.requestsTo(method).at(-1);
const key = generateLicenseKey();

describe('per-licence terms through the REST API', () => {
  it('POST sends them (null apart from absent) and answers the licence with its overrides', async () => {
    const productId = newId('prod');
    const res = await api('POST', '/api/v1/licenses', {
      product_id: productId,
      customer_email: 'terms@example.com',
      expires_at: '2031-01-31T12:00:00Z',
      max_activations: 5,
      lease_seconds: null,
    });
    expect(res.status).toBe(201);
    expect(lastAsked('createLicense')).toMatchObject({
      overrides: {
        expires_at: '2031-01-31T12:00:00Z',
        max_activations: { value: 5 },
        lease_seconds: { value: undefined },
      },
    });
    expect(res.body.license.overrides).toEqual({
      expires_at: '2031-01-31T12:00:00Z',
      max_activations: 5,
      lease_seconds: null,
    });
    expect(res.body.license.policy.max_activations).toBe(5);
  });

  it('a licence without terms of its own shows {}; a perpetual expiry of its own shows null', async () => {
    const plain = await api('POST', '/api/v1/licenses', { product_id: newId('prod'), customer_email: 'a@example.com' });
    expect(lastAsked('createLicense')?.overrides).toBeUndefined();
    expect(plain.body.license.overrides).toEqual({});
    const perpetual = await api('PATCH', `/api/v1/licenses/${key}`, { expires_at: null });
    expect(lastAsked('updateLicense')?.overrides).toMatchObject({ expires_at: '' });
    expect(perpetual.body.overrides).toEqual({ expires_at: null });
  });

  it('PATCH sends deactivate_excess, and the 409 of a limit below the machines in use is problem JSON', async () => {
    const refused = await api('PATCH', `/api/v1/licenses/${key}`, { max_activations: 1 });
    expect([refused.status, refused.body.code]).toEqual([409, 'conflict']);
    expect(lastAsked('updateLicense')).toMatchObject({
      deactivate_excess: false,
      overrides: { max_activations: { value: 1 } },
    });
    const lowered = await api('PATCH', `/api/v1/licenses/${key}`, { max_activations: 1, deactivate_excess: true });
    expect(lowered.status).toBe(200);
    expect(lastAsked('updateLicense')).toMatchObject({ deactivate_excess: true });
    expect(lowered.body.overrides).toEqual({ max_activations: 1 });
  });

  it.each([
    [{ max_activations: policyRules.max_activations.min - 1 }, 'max_activations'],
    [{ max_activations: policyRules.max_activations.max + 1 }, 'max_activations'],
    [{ lease_seconds: policyRules.lease_seconds.min - 1 }, 'lease_seconds'],
    [{ lease_seconds: policyRules.lease_seconds.max + 1 }, 'lease_seconds'],
    [{ lease_seconds: '60' }, 'lease_seconds'],
    [{ expires_at: 1_900_000_000 }, 'expires_at'],
    [{ expires_at: '' }, 'expires_at'],
    [{ deactivate_excess: 'yes' }, 'deactivate_excess'],
  ])('refuses %p (400 naming %s) before the licence service is asked', async (body, field) => {
    const before = gw.peers.license.requestsTo('updateLicense').length;
    const res = await api('PATCH', `/api/v1/licenses/${key}`, body);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect(gw.peers.license.requestsTo('updateLicense')).toHaveLength(before);
  });
});
