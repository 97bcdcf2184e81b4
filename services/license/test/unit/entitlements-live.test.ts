import { withPolicyDefaults, type Product } from '@licensing/proto';
import { AppError } from '@licensing/runtime';
import { distinctProducts, storedPolicy, withProductEntitlements } from '../../src/domain/entitlements';
import { LicenseCache } from '../../src/caches/license-cache';
import { toLicense } from '../../src/handlers/mapping';
import { updateLicense } from '../../src/use-cases/change-license';
import { productEntitlements, withLiveEntitlementsAll } from '../../src/use-cases/product-entitlements';
import { getLicense, listLicenses } from '../../src/use-cases/read-licenses';
import { validateLicense } from '../../src/use-cases/validate-license';
import { FakeBus } from '../../../../test/support/fakes/common';
import { licenseSetup, policy, PRODUCT_ID, product } from '../../../../test/support/fakes/license-deps';

// A licence's entitlements are its product's current ones with its own extras (docs/api.md,
// "Entitlements"): never copied into the licence, read through the product lookup when answering.

describe('the pure merge', () => {
  it('a stored policy carries no entitlements; the rest of it is kept', () => {
    const p = withPolicyDefaults({ ...policy({ entitlements: ['sync'] }), max_activations: 3 });
    expect(storedPolicy(p)).toEqual({ ...p, entitlements: [] });
    expect(p.entitlements).toEqual(['sync']); // not changed in place
  });

  it("a licence answers with its product's codes, whatever its stored policy held, and its extras apart", () => {
    const doc = {
      policy: withPolicyDefaults(policy({ entitlements: ['stale-copy'] })),
      extra_entitlements: ['own'],
    };
    const live = withProductEntitlements(doc, ['sync', 'pdf']);
    expect(live.policy.entitlements).toEqual(['sync', 'pdf']);
    expect(live.extra_entitlements).toEqual(['own']);
    expect(doc.policy.entitlements).toEqual(['stale-copy']); // the stored document is not touched
    expect(withProductEntitlements(doc, []).policy.entitlements).toEqual([]);
  });

  it('the products of a page are each named once, in first-seen order', () => {
    expect(distinctProducts([{ product_id: 'b' }, { product_id: 'a' }, { product_id: 'b' }])).toEqual(['b', 'a']);
    expect(distinctProducts([])).toEqual([]);
  });
});

describe("reading a product's entitlements", () => {
  it('an unknown product contributes none; any other failure is thrown', async () => {
    const { products } = licenseSetup();
    expect(await productEntitlements(products, 'acct_A', 'prod_01HZZZZZZZZZZZZZZZZZZZZZZY')).toEqual([]);
    const failing = {
      getProduct: async () => {
        throw new AppError('service_unavailable', 'down');
      },
    };
    await expect(productEntitlements(failing, 'acct_A', PRODUCT_ID)).rejects.toMatchObject({
      code: 'service_unavailable',
    });
  });

  it('fresh reads go past the cache when the lookup has one', async () => {
    const asked: string[] = [];
    const lookup = {
      getProduct: async () => {
        asked.push('cached');
        return product({ policy: policy({ entitlements: ['old'] }) });
      },
      getFreshProduct: async () => {
        asked.push('fresh');
        return product({ policy: policy({ entitlements: ['new'] }) });
      },
    };
    expect(await productEntitlements(lookup, 'acct_A', PRODUCT_ID)).toEqual(['old']);
    expect(await productEntitlements(lookup, 'acct_A', PRODUCT_ID, true)).toEqual(['new']);
    expect(asked).toEqual(['cached', 'fresh']);
  });

  it('a page of licences looks each product up once, however many licences it has', async () => {
    const s = licenseSetup({ policy: policy({ entitlements: ['sync'] }) });
    const other: Product = product({ id: 'prod_01HZZZZZZZZZZZZZZZZZZZZZZX', policy: policy({ entitlements: ['x'] }) });
    s.products.products.set(other.id, other);
    const docs = [await s.issued(), await s.issued(), await s.issued()];
    docs.push({ ...docs[0], _id: 'lic_other', product_id: other.id });
    s.products.calls.length = 0;
    const live = await withLiveEntitlementsAll(s.products, docs);
    expect(live.map((d) => d.policy.entitlements)).toEqual([['sync'], ['sync'], ['sync'], ['x']]);
    expect(s.products.calls.map((c) => c.req.id).sort()).toEqual([PRODUCT_ID, other.id].sort());
    expect(await withLiveEntitlementsAll(s.products, [])).toEqual([]);
  });
});

describe('a licence of a product whose entitlements change', () => {
  it('is stored without them, and answers, lists and validates with the current ones', async () => {
    const s = licenseSetup({ policy: policy({ entitlements: ['pdf'] }) });
    const lic = await s.issued();
    expect(lic.policy.entitlements).toEqual(['pdf']); // as answered
    expect(s.store.licenses.get(lic._id)?.policy.entitlements).toEqual([]); // as stored
    await updateLicense(s.deps, {
      account_id: 'acct_A',
      key: lic.key,
      customer_email: undefined,
      metadata: {},
      set_entitlements: true,
      entitlements: ['own'],
    });
    s.products.products.set(PRODUCT_ID, product({ policy: policy({ entitlements: ['pdf', 'sync'] }) }));

    const { doc } = await getLicense(s.deps, s.counter, 'acct_A', lic.key);
    expect(toLicense(doc, s.clock.now())).toMatchObject({
      entitlements: ['own', 'pdf', 'sync'],
      extra_entitlements: ['own'],
      policy: { entitlements: ['pdf', 'sync'] },
    });
    const filter = { product_id: '', customer_email: '', status: '' };
    const { items } = await listLicenses(s.deps, 'acct_A', filter, undefined);
    expect(items[0].policy.entitlements).toEqual(['pdf', 'sync']);

    const licenses = new LicenseCache(s.store, new FakeBus(), 100, 60_000);
    const counter = { record() {}, validated() {}, addRecent() {} };
    const deps = { licenses, products: s.products, store: s.store, counter, clock: s.clock };
    const ask = (entitlements: string[]) =>
      validateLicense(deps, {
        account_id: 'acct_A',
        key: lic.key,
        product_id: '',
        fingerprint: '',
        from_store: false,
        entitlements,
      });
    expect((await ask(['sync', 'own'])).verdict.code).toBe('valid');
    expect((await ask(['sync'])).license?.policy.entitlements).toEqual(['pdf', 'sync']);
    s.products.products.set(PRODUCT_ID, product({ policy: policy({ entitlements: [] }) }));
    expect((await ask(['sync'])).verdict.code).toBe('entitlements_missing');
    // Another account's caller learns nothing, and no product is looked up for it.
    s.products.calls.length = 0;
    const foreign = await validateLicense(deps, {
      account_id: 'acct_B',
      key: lic.key,
      product_id: '',
      fingerprint: '',
      from_store: false,
    });
    expect(foreign.license).toBeNull();
    expect(s.products.calls).toEqual([]);
  });
});
