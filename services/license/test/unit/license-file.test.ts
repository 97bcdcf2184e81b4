import type { SignPayloadRequest, SignPayloadResponse } from '@licensing/proto';
import { DAY_MS } from '@licensing/proto';
import { activate } from '../../src/use-cases/activations';
import { transitionLicense } from '../../src/use-cases/change-license';
import { issueLicenseFile, type PayloadSigner } from '../../src/use-cases/license-file';
import { refusal } from '../../../../test/support/fakes/common';
import { licenseSetup, policy } from '../../../../test/support/fakes/license-deps';

/** Signs nothing: records what it was asked and answers the payload back. */
class FakeSigner implements PayloadSigner {
  readonly requests: SignPayloadRequest[] = [];

  async signPayload(req: SignPayloadRequest): Promise<SignPayloadResponse> {
    this.requests.push(req);
    return { kid: 'kid_1', payload: Buffer.from(req.payload_json), signature: Buffer.from('sig') };
  }
}

async function setup(over = {}) {
  const s = licenseSetup(over);
  const signer = new FakeSigner();
  const lic = await s.issued();
  const fileDeps = { store: s.store, clock: s.clock, signer, products: s.products };
  const ask = (o: Record<string, unknown> = {}) => ({
    account_id: 'acct_A',
    key: lic.key,
    fingerprint: '',
    ttl_days: 0,
    ...o,
  });
  const payload = () => JSON.parse(signer.requests.at(-1)!.payload_json);
  return { ...s, signer, lic, fileDeps, ask, payload };
}

describe('issuing a licence file', () => {
  it("has the product's key sign the licence's facts, valid for 30 days by default", async () => {
    const { signer, clock, lic, fileDeps, ask, payload } = await setup();
    const signed = await issueLicenseFile(fileDeps, ask());
    expect(signed.kid).toBe('kid_1');
    expect(signer.requests).toHaveLength(1);
    expect(signer.requests[0]).toMatchObject({ account_id: 'acct_A', product_id: lic.product_id });
    expect(payload()).toEqual({
      license_key: lic.key,
      license_id: lic._id,
      product_id: lic.product_id,
      customer_email: 'buyer@example.com',
      status: 'active',
      expires_at: lic.expires_at!.toISOString(),
      fingerprint: null,
      entitlements: [],
      issued_at: clock.now().toISOString(),
      valid_until: new Date(clock.now().getTime() + 30 * DAY_MS).toISOString(),
      expiration_strategy: 'restrict',
    });
  });

  it("carries the policy's expiration_strategy, so an offline updater knows what stays available after expiry", async () => {
    for (const strategy of ['maintain_access', 'revoke_access']) {
      const { fileDeps, ask, payload } = await setup({ policy: policy({ expiration_strategy: strategy }) });
      await issueLicenseFile(fileDeps, ask());
      expect(payload().expiration_strategy).toBe(strategy);
    }
  });

  it('never lets a file outlive the licence: valid_until stops at the end of grace', async () => {
    const { clock, lic, fileDeps, ask, payload } = await setup();
    clock.advance(360 * DAY_MS);
    await issueLicenseFile(fileDeps, ask({ ttl_days: 365 }));
    expect(payload().valid_until).toBe(lic.grace_ends_at!.toISOString());
  });

  it.each([
    ['366 days', 366],
    ['a fraction of a day', 1.5],
    ['a negative number', -1],
  ])('refuses a ttl of %s before reading the licence', async (_what, ttlDays) => {
    const { signer, fileDeps, ask } = await setup();
    const err = await refusal(() => issueLicenseFile(fileDeps, ask({ ttl_days: ttlDays, key: 'not-a-key' })));
    expect(err.code).toBe('invalid_request');
    expect(err.fieldErrors.map((f) => f.field)).toEqual(['ttl_days']);
    expect(signer.requests).toEqual([]);
  });

  it("answers another account's licence as not found", async () => {
    const { signer, fileDeps, ask } = await setup();
    expect((await refusal(() => issueLicenseFile(fileDeps, ask({ account_id: 'acct_B' })))).code).toBe('not_found');
    expect(signer.requests).toEqual([]);
  });

  it('refuses a revoked licence as a conflict', async () => {
    const { signer, deps, lic, fileDeps, ask } = await setup();
    await transitionLicense(deps, { account_id: 'acct_A', key: lic.key, action: 'revoke' });
    const err = await refusal(() => issueLicenseFile(fileDeps, ask()));
    expect(err).toMatchObject({ code: 'conflict', message: 'the licence is revoked: no licence file can be issued' });
    expect(signer.requests).toEqual([]);
  });

  describe('when the policy requires activation', () => {
    const requiring = { policy: policy({ require_activation: true }) };

    it('asks for a fingerprint', async () => {
      const { fileDeps, ask } = await setup(requiring);
      const err = await refusal(() => issueLicenseFile(fileDeps, ask()));
      expect(err.fieldErrors.map((f) => f.field)).toEqual(['fingerprint']);
    });

    it('refuses a machine that is not activated', async () => {
      const { signer, fileDeps, ask } = await setup(requiring);
      const err = await refusal(() => issueLicenseFile(fileDeps, ask({ fingerprint: 'fp-1' })));
      expect(err).toMatchObject({ code: 'conflict', message: expect.stringMatching(/^not_activated/) });
      expect(signer.requests).toEqual([]);
    });

    it("signs an activated machine's file with its fingerprint", async () => {
      const { deps, lic, fileDeps, ask, payload } = await setup(requiring);
      await activate(deps, { account_id: 'acct_A', key: lic.key, fingerprint: 'fp-1', name: '' });
      await issueLicenseFile(fileDeps, ask({ fingerprint: ' fp-1 ' }));
      expect(payload().fingerprint).toBe('fp-1');
    });
  });
});
