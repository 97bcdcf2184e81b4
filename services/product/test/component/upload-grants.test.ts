import { createHash } from 'node:crypto';
import { ARTIFACT_SIGNATURE_MAX_LENGTH, ProductServiceClient, type CreateUploadGrantRequest } from '@licensing/proto';
import { createClient, newId } from '@licensing/runtime';
import { credentialOf } from '../../../../scripts/lib/topology';
import { TestClock, testTopology } from '../../../../test/support/stack';
import { productOfNewAccount, releaseWith, type ProductRef } from './release-fixtures';
import { useProductService } from './running-product';

// Upload grants in the product service alone, against real FerretDB and NATS: the web component makes
// one for a draft of its account (refused for any other release, another account's, a bad filename,
// platform, arch or signature), the gateway redeems it once (then, and once expired, not found), and
// the store keeps only the token's SHA-256. The browser's upload with it:
// gateway/test/component/upload-grant-routes.test.ts.

const t = testTopology();
const clock = new TestClock();
const run = useProductService(t, clock);
let web: ReturnType<typeof createClient<ProductServiceClient>>;

beforeAll(() => {
  web = createClient(ProductServiceClient, `127.0.0.1:${run.service.port}`, credentialOf(t, 'web'));
});

afterAll(() => {
  web?.close();
});

const FIFTEEN_MINUTES = 15 * 60 * 1000;

const grantFor = (of: ProductRef, releaseId: string, fields: Partial<CreateUploadGrantRequest> = {}) =>
  web.call.createUploadGrant({
    account_id: of.account_id,
    release_id: releaseId,
    filename: 'Editor-1.0.0.dmg',
    platform: 'macos',
    arch: 'universal',
    signature: '',
    ...fields,
  });

const redeem = (token: string) => run.products.call.redeemUploadGrant({ token });

const storedGrant = (token: string) =>
  run.service.ctx.db
    .collection('upload_grants')
    .findOne({ _id: createHash('sha256').update(token).digest('hex') as never });

describe('making an upload grant', () => {
  it('grants a draft of the account for 15 minutes, redeemed once with what it names', async () => {
    const of = await productOfNewAccount(run);
    const draft = await releaseWith(run, of, '1.0.0', { state: 'draft' });
    const before = clock.now().getTime();
    const grant = await grantFor(of, draft.id, { signature: ' untrusted comment: minisign ' });
    expect(grant.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(grant.expires_at) - before).toBeGreaterThanOrEqual(FIFTEEN_MINUTES - 1000);
    expect(Date.parse(grant.expires_at) - before).toBeLessThanOrEqual(FIFTEEN_MINUTES + 5000);
    expect(await redeem(grant.token)).toEqual({
      account_id: of.account_id,
      release_id: draft.id,
      filename: 'Editor-1.0.0.dmg',
      platform: 'macos',
      arch: 'universal',
      signature: 'untrusted comment: minisign',
    });
    // One upload per grant.
    await expect(redeem(grant.token)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('takes an empty platform and arch as any', async () => {
    const of = await productOfNewAccount(run);
    const draft = await releaseWith(run, of, '1.0.0', { state: 'draft' });
    const grant = await grantFor(of, draft.id, { filename: 'app.zip', platform: '', arch: '' });
    expect(await redeem(grant.token)).toMatchObject({ filename: 'app.zip', platform: 'any', arch: 'any' });
  });

  it('refuses a published or yanked release (409), and another account’s or a missing one (404)', async () => {
    const of = await productOfNewAccount(run);
    for (const [version, state] of [
      ['1.0.0', 'published'],
      ['2.0.0', 'yanked'],
    ] as const) {
      const release = await releaseWith(run, of, version, { state });
      await expect(grantFor(of, release.id)).rejects.toMatchObject({
        code: 'conflict',
        message: expect.stringContaining(`this release is ${state}`),
      });
    }
    const draft = await releaseWith(run, of, '3.0.0', { state: 'draft' });
    const other = { account_id: newId('acct'), product_id: of.product_id };
    await expect(grantFor(other, draft.id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(grantFor(of, newId('rel'))).rejects.toMatchObject({ code: 'not_found' });
  });

  it('refuses a bad filename, platform, arch or signature, naming the field', async () => {
    const of = await productOfNewAccount(run);
    const draft = await releaseWith(run, of, '1.0.0', { state: 'draft' });
    const cases: [Partial<CreateUploadGrantRequest>, string][] = [
      [{ filename: '' }, 'filename'],
      [{ filename: '../escape.zip' }, 'filename'],
      [{ filename: 'dir/app.zip' }, 'filename'],
      [{ filename: 'bell\u0007.zip' }, 'filename'],
      [{ platform: 'beos' }, 'platform'],
      [{ arch: 'ppc64' }, 'arch'],
      [{ signature: 's'.repeat(ARTIFACT_SIGNATURE_MAX_LENGTH + 1) }, 'signature'],
      [{ signature: 'line\nbreak' }, 'signature'],
    ];
    for (const [fields, field] of cases)
      await expect(grantFor(of, draft.id, fields)).rejects.toMatchObject({
        code: 'invalid_request',
        fieldErrors: [expect.objectContaining({ field })],
      });
  });

  it('is the web component’s to make and the gateway’s to redeem', async () => {
    const of = await productOfNewAccount(run);
    const draft = await releaseWith(run, of, '1.0.0', { state: 'draft' });
    await expect(
      run.products.call.createUploadGrant({
        account_id: of.account_id,
        release_id: draft.id,
        filename: 'a.zip',
        platform: 'any',
        arch: 'any',
        signature: '',
      }),
    ).rejects.toMatchObject({ code: 'forbidden' });
    const grant = await grantFor(of, draft.id);
    await expect(web.call.redeemUploadGrant({ token: grant.token })).rejects.toMatchObject({ code: 'forbidden' });
    expect(await redeem(grant.token)).toMatchObject({ release_id: draft.id });
  });
});

describe('redeeming an upload grant', () => {
  it('refuses a token it never made, or one of another shape (404)', async () => {
    for (const token of ['A'.repeat(43), 'short', '', `${'A'.repeat(43)}=`, 'a/b'.repeat(20)])
      await expect(redeem(token)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('works until its 15 minutes are over, and is refused after (404)', async () => {
    const of = await productOfNewAccount(run);
    const draft = await releaseWith(run, of, '1.0.0', { state: 'draft' });
    const inTime = await grantFor(of, draft.id, { filename: 'in-time.zip' });
    const late = await grantFor(of, draft.id, { filename: 'late.zip' });
    clock.advance(FIFTEEN_MINUTES - 60_000);
    expect(await redeem(inTime.token)).toMatchObject({ filename: 'in-time.zip' });
    clock.advance(61_000);
    await expect(redeem(late.token)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('finds the grant by the token’s SHA-256: the store never holds the token, and marks it used', async () => {
    const of = await productOfNewAccount(run);
    const draft = await releaseWith(run, of, '1.0.0', { state: 'draft' });
    const grant = await grantFor(of, draft.id);
    const stored = await storedGrant(grant.token);
    expect(stored).toMatchObject({ account_id: of.account_id, release_id: draft.id, used_at: null });
    expect(JSON.stringify(stored)).not.toContain(grant.token);
    expect(JSON.stringify(stored)).not.toContain(Buffer.from(grant.token, 'base64url').toString('hex'));
    await redeem(grant.token);
    expect((await storedGrant(grant.token))?.used_at).toBeInstanceOf(Date);
  });
});
