import { DAY_MS } from '@licensing/proto';
import { activate, deactivate, listActivations } from '../../src/use-cases/activations';
import { transitionLicense } from '../../src/use-cases/change-license';
import { refusal } from '../../../../test/support/fakes/common';
import { licenseSetup } from '../../../../test/support/fakes/license-deps';

async function setup() {
  const s = licenseSetup();
  const lic = await s.issued();
  const machine = (fingerprint: string, over: Record<string, string> = {}) => ({
    account_id: 'acct_A',
    key: lic.key,
    fingerprint,
    name: '',
    ...over,
  });
  return { ...s, lic, machine };
}

describe('activating a machine', () => {
  it('stores the activation with license.activated and hands it to the outbox', async () => {
    const { store, outbox, clock, deps, lic, machine } = await setup();
    const { activation, created } = await activate(deps, machine('  fp-1  ', { name: ' Laptop ' }));
    expect(created).toBe(true);
    expect(activation).toMatchObject({
      license_id: lic._id,
      account_id: 'acct_A',
      fingerprint: 'fp-1',
      name: 'Laptop',
      created_at: clock.now(),
      deactivated_at: null,
    });
    expect(activation._id).toMatch(/^act_/);
    expect(store.activations.size).toBe(1);
    expect(store.events.map((e) => e.type)).toEqual(['license.activated']);
    expect(store.events[0].data).toMatchObject({
      license: { id: lic._id },
      activation: { id: activation._id, fingerprint: 'fp-1', license_key: lic.key },
    });
    expect(outbox.flushed).toEqual([{ model: 'Activation', id: activation._id }]);
  });

  it('answers a retry of an active fingerprint with the same activation, recording nothing new', async () => {
    const { store, outbox, deps, machine } = await setup();
    const first = await activate(deps, machine('fp-1'));
    const again = await activate(deps, machine('fp-1'));
    expect(again).toEqual({ activation: first.activation, created: false });
    expect(store.activations.size).toBe(1);
    expect(store.events).toHaveLength(1);
    expect(outbox.flushed).toHaveLength(1);
  });

  it('refuses a machine beyond max_activations as a conflict that says so', async () => {
    const { store, deps, machine } = await setup();
    await activate(deps, machine('fp-1'));
    await activate(deps, machine('fp-2'));
    const err = await refusal(() => activate(deps, machine('fp-3')));
    expect(err.code).toBe('conflict');
    expect(err.message).toMatch(/^activation_limit_reached: .* 2 machines/);
    expect(store.activations.size).toBe(2);
    expect(store.events).toHaveLength(2);
  });

  it('answers slot races lost on every attempt with a conflict to retry, flushing nothing', async () => {
    const { store, outbox, deps, machine } = await setup();
    store.contended = true;
    const err = await refusal(() => activate(deps, machine('fp-1')));
    expect(err).toMatchObject({ code: 'conflict', message: expect.stringMatching(/retry$/) });
    expect(store.activateCalls).toBe(4);
    expect(outbox.flushed).toEqual([]);
  });

  it('tries a lost slot race again after a short pause: many machines starting at once all get a seat', async () => {
    const { store, deps, machine } = await setup();
    store.contendedCalls = 2;
    const out = await activate(deps, machine('fp-1'));
    expect(out.created).toBe(true);
    expect(store.activateCalls).toBe(3);
  });

  it.each([
    ['an empty fingerprint', { fingerprint: '   ' }, 'fingerprint'],
    ['a fingerprint over 200 characters', { fingerprint: 'x'.repeat(201) }, 'fingerprint'],
    ['a fingerprint with a control character', { fingerprint: 'fp\u0001' }, 'fingerprint'],
    ['a name over 100 characters', { name: 'n'.repeat(101) }, 'name'],
  ])('refuses %s before reading the licence', async (_what, over, field) => {
    const { store, deps, machine } = await setup();
    store.findInAccount = async () => {
      throw new Error('read the licence');
    };
    const err = await refusal(() => activate(deps, machine('fp-1', over)));
    expect(err.code).toBe('invalid_request');
    expect(err.fieldErrors.map((f) => f.field)).toEqual([field]);
  });

  it("answers another account's licence as not found", async () => {
    const { store, deps, machine } = await setup();
    const err = await refusal(() => activate(deps, machine('fp-1', { account_id: 'acct_B' })));
    expect(err.code).toBe('not_found');
    expect(store.activations.size).toBe(0);
  });

  it('refuses a suspended licence as a conflict', async () => {
    const { store, deps, lic, machine } = await setup();
    await transitionLicense(deps, { account_id: 'acct_A', key: lic.key, action: 'suspend' });
    const err = await refusal(() => activate(deps, machine('fp-1')));
    expect(err).toMatchObject({ code: 'conflict', message: 'the licence is suspended: it cannot be activated' });
    expect(store.activations.size).toBe(0);
  });

  it('refuses a licence whose grace has ended (by the clock) as expired', async () => {
    const { deps, clock, machine } = await setup();
    clock.advance(373 * DAY_MS);
    const err = await refusal(() => activate(deps, machine('fp-1')));
    expect(err).toMatchObject({ code: 'conflict', message: 'the licence is expired: it cannot be activated' });
  });

  it('still activates on the last day of grace', async () => {
    const { deps, clock, machine } = await setup();
    clock.advance(371 * DAY_MS);
    expect((await activate(deps, machine('fp-1'))).created).toBe(true);
  });
});

describe('listing and deactivating machines', () => {
  it('deactivates with license.deactivated, freeing the slot for another machine', async () => {
    const { store, outbox, clock, deps, lic, machine } = await setup();
    const { activation } = await activate(deps, machine('fp-1'));
    await activate(deps, machine('fp-2'));
    clock.advance(60_000);
    const done = await deactivate(deps, 'acct_A', lic.key, activation._id);
    expect(done).toMatchObject({ _id: activation._id, deactivated_at: clock.now() });
    expect(store.events.map((e) => e.type)).toEqual(['license.activated', 'license.activated', 'license.deactivated']);
    expect(outbox.flushed.at(-1)).toEqual({ model: 'Activation', id: activation._id });
    expect((await activate(deps, machine('fp-3'))).created).toBe(true);
  });

  it('lists only the active machines of the licence', async () => {
    const { deps, lic, machine } = await setup();
    const { activation } = await activate(deps, machine('fp-1'));
    await activate(deps, machine('fp-2'));
    await deactivate(deps, 'acct_A', lic.key, activation._id);
    const { items } = await listActivations(deps, 'acct_A', lic.key, undefined);
    expect(items.map((a) => a.fingerprint)).toEqual(['fp-2']);
  });

  it("answers the list of another account's licence as not found", async () => {
    const { deps, lic } = await setup();
    expect((await refusal(() => listActivations(deps, 'acct_B', lic.key, undefined))).code).toBe('not_found');
  });

  it('answers a malformed activation id as not found without asking the store', async () => {
    const { store, deps, lic } = await setup();
    store.deactivate = async () => {
      throw new Error('asked the store');
    };
    const err = await refusal(() => deactivate(deps, 'acct_A', lic.key, 'lic_nope'));
    expect(err).toMatchObject({ code: 'not_found', message: 'activation not found' });
  });

  it('answers an activation already deactivated as not found, publishing nothing more', async () => {
    const { store, outbox, deps, lic, machine } = await setup();
    const { activation } = await activate(deps, machine('fp-1'));
    await deactivate(deps, 'acct_A', lic.key, activation._id);
    const err = await refusal(() => deactivate(deps, 'acct_A', lic.key, activation._id));
    expect(err.code).toBe('not_found');
    expect(store.events).toHaveLength(2);
    expect(outbox.flushed).toHaveLength(2);
  });

  it('answers an activation of another licence of the account as not found', async () => {
    const { deps, issued, lic, machine } = await setup();
    const { activation } = await activate(deps, machine('fp-1'));
    const other = await issued();
    expect(other._id).not.toBe(lic._id);
    expect((await refusal(() => deactivate(deps, 'acct_A', other.key, activation._id))).code).toBe('not_found');
  });
});
