import { newId, type AppError } from '@licensing/runtime';
import { type RunningLicense, startLicense } from './running-license';

// What a licence lets an app free (over gRPC, as the gateway calls Deactivate for an app credential:
// key_scope "validate", whether a License credential or a validate-scope key sent it, and the calling
// machine's fingerprint), against real FerretDB and NATS: machines freed by app credentials count
// against the policy's customer_deactivations_per_30_days, an app releasing its own floating seat is
// never counted, and the vendor's full-scope key is not counted at all. The gateway's side (which
// scope and fingerprint it sends, the 429 and 409 it answers): gateway/test/component/app-credentials.test.ts.

const DAY_S = 86_400;
let svc: RunningLicense;

beforeAll(async () => {
  svc = await startLicense();
});

afterAll(async () => {
  await svc?.stop();
});

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (err: AppError) => err,
  );

/** A licence of a new vendor's product with this policy, and how to free its machines. */
async function licence(policy: Record<string, unknown>) {
  const accountId = newId('acct');
  const product = svc.product(accountId, policy);
  const key = await svc.issue(accountId, product.id, 'buyer@example.com');
  const free = (activation_id: string, key_scope: 'validate' | 'full', fingerprint = '') =>
    svc.api.deactivate({ account_id: accountId, key, activation_id, key_scope, fingerprint });
  const machines = async () =>
    (await svc.api.listActivations({ account_id: accountId, key, page: { limit: 100, starting_after: '' } })).data;
  const machine = (fingerprint: string) => svc.activate(accountId, key, fingerprint);
  return { free, machines, machine };
}

describe("freeing machines with app credentials spends the customer's deactivations", () => {
  it('a License credential and a validate-scope key share customer_deactivations_per_30_days; the full key frees the rest', async () => {
    const l = await licence({ max_activations: 5, customer_deactivations_per_30_days: 2 });
    const ids: string[] = [];
    for (const fp of ['m1', 'm2', 'm3', 'm4']) ids.push(await l.machine(fp));
    await l.free(ids[0], 'validate');
    // Naming the fingerprint of a node-locked machine changes nothing: only a floating seat is "released".
    await l.free(ids[1], 'validate', 'm2');
    const refused = await refusal(l.free(ids[2], 'validate'));
    expect(refused.code).toBe('rate_limited');
    expect(refused.message).toMatch(/freed 2 machines of this licence in the last 30 days/);
    expect(refused.retryAfterS).toBeGreaterThan(29 * DAY_S);
    expect((await refusal(l.free(ids[2], 'validate'))).code).toBe('rate_limited');
    // Still active, and the vendor's own key is not counted.
    expect(await l.machines()).toHaveLength(2);
    await l.free(ids[2], 'full');
    await l.free(ids[3], 'full');
    expect(await l.machines()).toEqual([]);
  });

  it('0 leaves freeing machines to the vendor: 409', async () => {
    const l = await licence({ customer_deactivations_per_30_days: 0 });
    const id = await l.machine('m1');
    const refused = await refusal(l.free(id, 'validate'));
    expect(refused.code).toBe('conflict');
    expect(refused.message).toMatch(/freed by the vendor only/);
    expect((await l.machines()).map((a) => a.id)).toEqual([id]);
  });

  it('an app releasing its own floating seat (its fingerprint) is never counted', async () => {
    const l = await licence({ max_activations: 2, lease_seconds: 300, customer_deactivations_per_30_days: 1 });
    for (let round = 0; round < 3; round++) await l.free(await l.machine('own'), 'validate', 'own');
    // Another machine's floating seat is counted: the one allowed, then refused.
    const [a, b] = [await l.machine('other-1'), await l.machine('other-2')];
    await l.free(a, 'validate', 'own');
    expect((await refusal(l.free(b, 'validate', 'own'))).code).toBe('rate_limited');
  });
});
