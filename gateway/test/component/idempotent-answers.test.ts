import { newId } from '@licensing/runtime';
import { AnswerGate } from '@licensing/test-support';
import { eventually } from '../../../test/support/eventually';
import { accountHandlers, fakeVendor, productHandlers } from './fake-service-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';

// An Idempotency-Key's answer is kept before it is sent (as Stripe does): a client that retries the
// moment it has the first answer gets it replayed, and never meets the first run still holding the key
// (409). The account service that keeps the answers is faked, its SettleRequestKey held by the test.

const vendor = fakeVendor('enterprise');
const settling = new AnswerGate();
const kept = new Map<string, { status: number; body_json: string; location: string }>();
let h: GatewayWithFakeServices;

beforeAll(async () => {
  h = await startGatewayWithFakeServices({
    handlers: {
      account: {
        ...accountHandlers([vendor]),
        claimRequestKey: ({ key }) => {
          const answer = kept.get(key);
          return answer
            ? { replay: true, run: '', ...answer }
            : { replay: false, run: newId('run'), status: 0, body_json: '', location: '' };
        },
        renewRequestKey: () => ({}),
        settleRequestKey: async ({ key, succeeded, status, body_json, location }) => {
          await settling.passed();
          if (succeeded) kept.set(key, { status, body_json, location });
          return {};
        },
      },
      product: productHandlers([]),
    },
  });
});

afterAll(async () => {
  await h?.stop();
});

const create = (key: string) =>
  fetch(`${h.url}/api/v1/products`, {
    method: 'POST',
    headers: { authorization: `Bearer ${vendor.apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ name: 'Kept' }),
  });

it('a retry sent the moment the first answer arrives is that answer replayed', async () => {
  const key = newId('idem');
  const release = settling.hold();
  let answered = false;
  const pending = create(key).then((res) => {
    answered = true;
    return res;
  });
  // The answer waits while the account service has not kept it yet.
  await eventually(() => expect(h.fakes.account.requestsTo('settleRequestKey')).toHaveLength(1));
  expect(answered).toBe(false);
  release();
  const first = await pending;
  expect(first.status).toBe(201);
  // By the time the first answer is here, it is kept: no window in which the key is still "running".
  expect(kept.has(key)).toBe(true);
  const firstBody = await first.json();
  const again = await create(key);
  expect(again.status).toBe(201);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(await again.json()).toEqual(firstBody);
  expect(h.fakes.product.requestsTo('createProduct')).toHaveLength(1);
});
