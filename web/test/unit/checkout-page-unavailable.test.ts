import type { AddressInfo } from 'node:net';
import express from 'express';
import { AppError, createLogger, type AttemptThrottle } from '@licensing/runtime';
import type { Clients } from '../../src/backends/clients';
import { checkoutRouter } from '../../src/checkout/routes';

// A payment the checkout service took but whose licence it could not issue in time answers the buyer's
// pay call as unavailable (services/checkout/test/component/paid-issuance.test.ts): the hosted page
// says 503 with Retry-After 5, and that nothing more was charged. The page's router in this process,
// on loopback, its checkout service a stand-in that answers as the real one did there.

const ID = 'cs_01JD8Z3K6Q2W4E5R6T7Y8V9X0P';
let server: ReturnType<ReturnType<typeof express>['listen']>;
let url: string;

beforeAll(async () => {
  const pay = async () => {
    throw new AppError('service_unavailable', 'the licence service did not answer in time');
  };
  const clients = { checkoutPages: { pay } } as unknown as Clients;
  // Every request allowed: the throttle's own tests are the runtime's.
  const throttle = { fail: async () => null } as unknown as AttemptThrottle;
  const app = express();
  app.use(
    '/checkout',
    checkoutRouter({ clients, log: createLogger('web-test', 'silent'), secureCookies: false, throttle }),
  );
  await new Promise<void>((resolve) => {
    server = app.listen(0, '127.0.0.1', () => resolve());
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

it('checkout: a paid session whose issuance ran out of time is a 503 with Retry-After 5 on the page', async () => {
  const res = await fetch(`${url}/checkout/${ID}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: 'lk_checkout_csrf=tok' },
    body: new URLSearchParams({ _csrf: 'tok', email: 'buyer@example.com', card: '4242 4242 4242 4242' }),
    redirect: 'manual',
  });
  expect(res.status).toBe(503); // paid, but the licence could not be issued in time
  expect(res.headers.get('retry-after')).toBe('5');
  expect(await res.text()).toContain('Nothing more was charged');
});
