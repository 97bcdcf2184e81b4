import { idempotent, type idempotencyModel } from '@licensing/runtime';
import { FakeIdempotencyModel } from '../../../../test/support/fakes/checkout-store';
import { eventually } from '../../../../test/support/eventually';

// How a run ended is written even when the store refuses that write at first (it is away for a
// moment): tried again until it lands, so a retry of the key need not wait for the lease to end.

it('a final write the store refused is made once the store answers again', async () => {
  const model = new FakeIdempotencyModel();
  const updateOne = model.updateOne.bind(model);
  let refusals = 2;
  model.updateOne = (filter, update) =>
    (update.$set as { state?: string } | undefined)?.state && refusals-- > 0
      ? { exec: async () => Promise.reject(new Error('connection refused')) }
      : updateOne(filter, update);
  const store = model as unknown as ReturnType<typeof idempotencyModel>;
  expect(await idempotent(store, 'acct', 'k1', { a: 1 }, async () => 'issued')).toBe('issued');
  expect(model.records.get('acct:k1')?.state).toBe('in_flight'); // the store refused the first write
  await eventually(() => expect(model.records.get('acct:k1')).toMatchObject({ state: 'done' }), { timeoutMs: 5000 });
  expect(await idempotent(store, 'acct', 'k1', { a: 1 }, async () => 'a second')).toBe('issued');
});
