import type { AddressInfo } from 'node:net';
import express from 'express';
import { AppError, createLogger, type AttemptThrottle } from '@licensing/runtime';
import type { Clients } from '../../src/backends/clients';
import { checkoutRouter } from '../../src/checkout/routes';

// The hosted page's router in this process, on loopback, its checkout service a stand-in that answers
// as the real one does (services/checkout/test/component): a payment the service took but whose
// licence it could not issue in time is a pay call answered as unavailable (paid-issuance.test.ts),
// which the page says as 503 with Retry-After 5 and that nothing more was charged; a billing link shows
// the subscription's status, and one the service does not know is a 404 page.

const ID = 'cs_01JD8Z3K6Q2W4E5R6T7Y8V9X0P';
let server: ReturnType<ReturnType<typeof express>['listen']>;
let url: string;

beforeAll(async () => {
  const pay = async () => {
    throw new AppError('service_unavailable', 'the licence service did not answer in time');
  };
  const getBilling = async ({ token }: { token: string }) =>
    token === 'T'.repeat(43)
      ? {
          found: true,
          product_name: 'Pixel Forge Monthly',
          status: 'unpaid',
          amount: 1000,
          currency: 'EUR',
          interval: 'month',
          interval_count: 1,
          outcome: '',
          message: '',
        }
      : {
          found: false,
          product_name: '',
          status: '',
          amount: 0,
          currency: '',
          interval: '',
          interval_count: 0,
          outcome: '',
          message: '',
        };
  const clients = { checkoutPages: { pay, getBilling } } as unknown as Clients;
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

it('a payment through the billing portal: the page shows the unpaid subscription; a made-up link is not a page', async () => {
  const page = await fetch(`${url}/checkout/${ID}/billing/${'T'.repeat(43)}`);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('unpaid');
  expect((await fetch(`${url}/checkout/${ID}/billing/${'x'.repeat(43)}`)).status).toBe(404);
});
