import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkResponse } from '../../../test/support/openapi';
import { accountHandlers, fakeVendor } from './fake-service-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';

// POST /webhooks/stripe: Stripe's deliveries reach the checkout service's webhook receiver through the
// gateway with their bytes and signature untouched (the service checks the signature over the exact
// bytes: services/checkout/test/component/stripe-checkout.test.ts), and its answer comes back as it
// gave it. The receiver is a stand-in that records what it got and answers as the service does.

const vendor = fakeVendor('enterprise');
let h: GatewayWithFakeServices;
let receiver: Server;
let url: string;
const received: { body: string; headers: IncomingHttpHeaders }[] = [];
/** What the stand-in answers next: the checkout service's answers to a delivery. */
let answer: { status: number; type: string; body: unknown } = {
  status: 200,
  type: 'application/json',
  body: { received: true },
};

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
      res.writeHead(answer.status, { 'content-type': answer.type }).end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  h = await startGatewayWithFakeServices({ handlers: { account: accountHandlers([vendor]) }, startGateway: false });
  const gw = await h.extraGateway({
    CHECKOUT_PAGE_URL: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
  });
  url = gw.url;
});

afterAll(async () => {
  await h?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

const deliver = async (payload: string, signature: string) => {
  const res = await fetch(`${url}/webhooks/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature },
    body: payload,
  });
  const text = await res.text();
  const body = text ? JSON.parse(text) : text;
  checkResponse('POST', '/webhooks/stripe', res.status, res.headers.get('content-type') ?? '', body);
  return { status: res.status, body };
};

it("passes Stripe's delivery on with its exact bytes and signature, and the checkout service's answer back", async () => {
  // Odd spacing and key order: a parser that re-serialized it would change the bytes the signature covers.
  const payload = '{ "id":"evt_test_1",  "type":"checkout.session.completed","data":{"object":{"b":1,"a":2}} }';
  const signature = 't=1700000000,v1=abc,v1=def';
  expect(await deliver(payload, signature)).toEqual({ status: 200, body: { received: true } });
  expect(received.at(-1)?.body).toBe(payload);
  expect(received.at(-1)?.headers['stripe-signature']).toBe(signature);
  answer = {
    status: 409,
    type: 'application/problem+json',
    body: {
      type: 'about:blank',
      title: 'Conflict',
      status: 409,
      code: 'conflict',
      detail: 'this delivery was seen',
      request_id: 'req-1',
    },
  };
  expect(await deliver(payload, signature)).toMatchObject({ status: 409, body: { code: 'conflict' } });
});
