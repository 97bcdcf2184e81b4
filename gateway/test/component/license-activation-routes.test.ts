import type { Activation } from '@licensing/proto';
import { AppError } from '@licensing/runtime';
import { type GatewayOverFakes, startGatewayOverFakes } from './gateway-over-fakes';

// The REST face of activations: what the licence service answers (faked here) becomes 201 for a new
// machine, 200 for a machine already activated (a retry is not a second activation), and 409 with
// next_action free_a_seat when every seat is taken; a deactivation is 204. How the licence service
// itself holds max_activations: services/license/test/component/activation-limits.test.ts.

let gw: GatewayOverFakes;
const KEY = 'ABCDE-FGHJK-LMNPQ-RSTUV-WXYZ2-34567';
const activation = (fingerprint: string): Activation => ({
  id: `act_${fingerprint}`,
  license_id: 'lic_1',
  fingerprint,
  name: '',
  created_at: '2026-01-01T00:00:00.000Z',
  lease_expires_at: '',
  last_seen_at: '',
});

beforeAll(async () => {
  gw = await startGatewayOverFakes({
    license: {
      activate: ({ fingerprint }) => {
        if (fingerprint === 'one-too-many')
          throw AppError.refusedAs('conflict', 'activation_limit_reached', 'every seat of this licence is taken');
        return { activation: activation(fingerprint), created: fingerprint !== 'machine-a' };
      },
      deactivate: ({ activation_id }) => activation(activation_id.replace(/^act_/, '')),
    },
  });
});

afterAll(async () => {
  await gw?.stop();
});

const activate = (fingerprint: string) => gw.request('POST', `/api/v1/licenses/${KEY}/activations`, { fingerprint });

it('answers 201 for a new machine and 200 for one already activated', async () => {
  const created = await activate('machine-b');
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ id: 'act_machine-b', fingerprint: 'machine-b' });
  expect(gw.peers.license.requestsTo('activate').at(-1)).toEqual({
    account_id: gw.account,
    key: KEY,
    fingerprint: 'machine-b',
    name: '',
  });
  const again = await activate('machine-a');
  expect(again.status).toBe(200);
  expect(again.body).toMatchObject({ id: 'act_machine-a' });
});

it('answers 409 with next_action free_a_seat when every seat is taken', async () => {
  const full = await activate('one-too-many');
  expect(full.status).toBe(409);
  expect(full.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(full.body).toMatchObject({ status: 409, next_action: 'free_a_seat' });
});

it('deactivates a machine with 204', async () => {
  const res = await gw.request('DELETE', `/api/v1/licenses/${KEY}/activations/act_machine-a`);
  expect(res.status).toBe(204);
  expect(gw.peers.license.requestsTo('deactivate').at(-1)).toMatchObject({
    account_id: gw.account,
    key: KEY,
    activation_id: 'act_machine-a',
  });
});
