import { CreateProductRequest, type LicensePolicy } from '@licensing/proto';
import { type AppError, natsServers, newId } from '@licensing/runtime';
import { connect } from 'nats';
import { testTopology } from '../../../../test/support/stack';
import { useProductService } from './running-product';

// A product's licence policy as the product service keeps it, over gRPC as the gateway calls it,
// against real FerretDB and NATS: stored with its defaults, replaced whole by an update (absent fields
// take their defaults again), announced by product.updated before the update is answered (the
// licence service's product cache forgets the old policy on it), and refused naming the field when it
// breaks proto/rules' ranges. The REST shape of a policy (every field spelled out, values of the wrong
// JSON type): gateway/test/component/license-routes.test.ts and floating-seat-routes.test.ts; that licences keep the policy they were
// issued under: services/license/test/component/license-lifecycle.test.ts.

const t = testTopology();
const run = useProductService(t);
const account = newId('acct');
const create = (policy: Partial<LicensePolicy>) =>
  run.products.call.createProduct(
    CreateProductRequest.fromPartial({ account_id: account, name: 'Policy product', policy }),
  );

const defaults = {
  grace_days: 0,
  require_activation: false,
  validate_keys_see_email: false,
  refund_action: 'revoke',
  entitlements: [],
  customer_deactivations_per_30_days: 3,
  payment_grace_days: 7,
  max_file_ttl_days: 30,
  expiration_strategy: 'restrict',
};

describe('licence policy on the product', () => {
  it('is set at creation, shown, and editable; licences keep the policy they were issued under', async () => {
    const { id } = await create({ duration_days: 30, max_activations: 3, grace_days: 7, require_activation: true });
    expect((await run.products.call.getProduct({ account_id: account, id })).policy).toEqual({
      ...defaults,
      duration_days: 30,
      max_activations: 3,
      grace_days: 7,
      require_activation: true,
    });
    const patched = await run.products.call.updateProduct({
      account_id: account,
      id,
      policy: { ...defaults, duration_days: 365 },
      price: undefined,
      remove_price: false,
    });
    expect(patched.policy).toEqual({ ...defaults, duration_days: 365 });
    // product.updated is in the stream before the update is answered (the last one of its subject).
    const nc = await connect({ servers: natsServers(t.natsUrl) });
    try {
      const jsm = await nc.jetstreamManager();
      const last = await jsm.streams.getMessage(t.stream, { last_by_subj: `${t.subjectPrefix}.product.updated` });
      expect(last.json<{ data: { product: { id: string } } }>().data.product.id).toBe(id);
    } finally {
      await nc.close();
    }
    await run.events.waitFor(
      (e) => e.type === 'product.updated' && (e.data as { product: { id: string } }).product.id === id,
    );
    const listed = await run.products.call.listProducts({
      account_id: account,
      page: { limit: 100, starting_after: '' },
    });
    expect(listed.data.find((p) => p.id === id)?.policy?.duration_days).toBe(365);
  });

  it.each([
    [{ duration_days: 0 }, 'policy.duration_days'],
    [{ duration_days: -5 }, 'policy.duration_days'],
    [{ max_activations: 0 }, 'policy.max_activations'],
    [{ grace_days: 3 }, 'policy.grace_days'],
  ])('refuses policy %p (400, field %s)', async (policy, field) => {
    const refused = await create(policy).then(
      () => undefined,
      (err: AppError) => err,
    );
    expect(refused?.code).toBe('invalid_request');
    expect(refused?.fieldErrors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  });
});

describe('policy.lease_seconds', () => {
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (err: AppError) => err,
    );
  // 1.5 and 'sixty' cannot cross gRPC (an int32): the gateway refuses them (gateway/test/component/floating-seat-routes.test.ts).
  it.each([29, 86_401, 0])('%p is refused with 400 naming the field, on create and on update', async (bad) => {
    const created = await refusal(create({ lease_seconds: bad }));
    expect([created?.code, created?.fieldErrors[0]?.field]).toEqual(['invalid_request', 'policy.lease_seconds']);
    const { id } = await create({});
    const updated = await refusal(
      run.products.call.updateProduct({
        account_id: account,
        id,
        policy: { ...defaults, lease_seconds: bad },
        price: undefined,
        remove_price: false,
      }),
    );
    expect([updated?.code, updated?.fieldErrors[0]?.field]).toEqual(['invalid_request', 'policy.lease_seconds']);
  });

  it('30 and 86,400 are floating, null (the default) node-locked', async () => {
    for (const lease of [30, 86_400, undefined])
      expect((await create({ lease_seconds: lease })).policy?.lease_seconds).toBe(lease);
    expect((await create({})).policy?.lease_seconds).toBeUndefined();
  });
});

describe('policy.expiration_strategy', () => {
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (err: AppError) => err,
    );
  const update = (id: string, expiration_strategy: string) =>
    run.products.call.updateProduct({
      account_id: account,
      id,
      policy: { ...defaults, duration_days: 30, expiration_strategy },
      price: undefined,
      remove_price: false,
    });

  it('is kept as created and as updated, read back so; empty (and absent) is restrict', async () => {
    const { id, policy } = await create({ duration_days: 30, expiration_strategy: 'maintain_access' });
    expect(policy?.expiration_strategy).toBe('maintain_access');
    expect((await run.products.call.getProduct({ account_id: account, id })).policy?.expiration_strategy).toBe(
      'maintain_access',
    );
    expect((await update(id, 'revoke_access')).policy?.expiration_strategy).toBe('revoke_access');
    expect((await run.products.call.getProduct({ account_id: account, id })).policy?.expiration_strategy).toBe(
      'revoke_access',
    );
    // An update replaces the policy whole: a field left empty takes its default again.
    expect((await update(id, '')).policy?.expiration_strategy).toBe('restrict');
    expect((await create({})).policy?.expiration_strategy).toBe('restrict');
  });

  it('a word outside the vocabulary is 400 naming the field, on create and on update, and changes nothing', async () => {
    const created = await refusal(create({ duration_days: 30, expiration_strategy: 'forever' }));
    expect([created?.code, created?.fieldErrors[0]?.field]).toEqual(['invalid_request', 'policy.expiration_strategy']);
    const { id } = await create({ duration_days: 30, expiration_strategy: 'maintain_access' });
    const updated = await refusal(update(id, 'Revoke_Access'));
    expect([updated?.code, updated?.fieldErrors[0]?.field, updated?.message]).toEqual([
      'invalid_request',
      'policy.expiration_strategy',
      expect.stringContaining('restrict, maintain_access, revoke_access'),
    ]);
    expect((await run.products.call.getProduct({ account_id: account, id })).policy?.expiration_strategy).toBe(
      'maintain_access',
    );
  });
});
