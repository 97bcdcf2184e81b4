import { randomBytes } from 'node:crypto';
import { CheckoutPage } from '@licensing/proto';
import { eventually } from '../../../test/support/eventually';
import { WebClient } from '../../../test/support/web-client';
import { fakeOwner, sessionHandlers } from './fake-account-answers';
import { startWebWithFakeServices, type WebWithFakeServices } from './web-with-fake-services';

// The web component's throttles count and judge an attempt in one atomic step in real Redis, so a burst
// sent in parallel gets exactly the limit through, never more: sign-in and sign-up per e-mail and per
// address, the hosted checkout page per address, and made-up dashboard session cookies per address
// (which also cost no look-up once known). The account and checkout services are faked
// (fake-account-answers.ts). The gateway's throttles: gateway/test/component/throttles.test.ts.

const count = (statuses: number[], s: number) => statuses.filter((x) => x === s).length;
const email = () => `owner-${randomBytes(4).toString('hex')}@example.com`;
const owner = fakeOwner();
const started: WebWithFakeServices[] = [];

afterAll(async () => {
  await Promise.all(started.map((w) => w.stop()));
});

/**
 * A web component of its own (own counters in Redis) with these limits, once it counts in Redis. A
 * generous Redis timeout: on a busy machine a command slower than the default 250 ms is judged by the
 * in-memory insurance limiter (by design), which has not seen the other attempts.
 */
async function webWith(settings: Record<string, string>, checkoutPage?: boolean): Promise<WebWithFakeServices> {
  const w = await startWebWithFakeServices({
    handlers: { account: sessionHandlers([owner]) },
    // The checkout service knows no session of this id, and says so (as its page state, not an error).
    checkoutPage: checkoutPage ? { getPage: () => CheckoutPage.fromPartial({ state: 'not_found' }) } : undefined,
    settings: { REDIS_TIMEOUT_MS: '5000', ...settings },
  });
  started.push(w);
  await eventually(async () =>
    expect(await (await fetch(`http://127.0.0.1:${w.web.metricsPort}/metrics`)).text()).toMatch(
      /^licensing_rate_limit_fallback(\{[^}]*\})? 0$/m,
    ),
  );
  return w;
}

/** A sign-in or sign-up form ready to post: its CSRF cookie and token. */
async function form(url: string, page: 'signin' | 'signup') {
  const web = new WebClient(url);
  const csrf = WebClient.csrf((await web.get(`/dashboard/${page}`)).html);
  return { web, csrf };
}

it('sign-in: a parallel burst of wrong passwords gets exactly the limit through; a right password is not counted as a guess', async () => {
  const w = await webWith({ SIGNIN_FAILURES_PER_EMAIL: '8', SIGNIN_FAILURES_PER_ADDRESS: '1000' });
  for (let i = 0; i < 5; i++)
    expect((await new WebClient(w.url).signIn(owner.user.email, owner.password)).status).toBe(303); // never counted
  const forms = await Promise.all(Array.from({ length: 20 }, () => form(w.url, 'signin')));
  const statuses = (
    await Promise.all(
      forms.map(({ web, csrf }, i) =>
        web.post('/dashboard/signin', { _csrf: csrf, email: owner.user.email, password: `wrong guess ${i}` }),
      ),
    )
  ).map((r) => r.status);
  expect([count(statuses, 401), count(statuses, 429)]).toEqual([8, 12]);
});

it('sign-up: throttled per e-mail and per address, every attempt counted, in parallel too', async () => {
  const w = await webWith({ SIGNUPS_PER_EMAIL: '3', SIGNUPS_PER_ADDRESS: '11' });
  const target = email();
  const forms = await Promise.all(Array.from({ length: 8 }, () => form(w.url, 'signup')));
  const statuses = (
    await Promise.all(
      forms.map(({ web, csrf }) =>
        web.post('/dashboard/signup', {
          _csrf: csrf,
          account_name: 'Burst',
          email: target,
          password: 'a long enough passphrase',
        }),
      ),
    )
  ).map((r) => r.status);
  expect(count(statuses, 429)).toBe(5);
  expect(count(statuses, 303)).toBe(3); // "check your inbox" for each attempt let through
  // Every attempt counted for the address too (8 of its 11): three more e-mails pass, the next is refused.
  const more: number[] = [];
  for (let i = 0; i < 4; i++) {
    const { web, csrf } = await form(w.url, 'signup');
    more.push(
      (
        await web.post('/dashboard/signup', {
          _csrf: csrf,
          account_name: 'More',
          email: email(),
          password: 'a long enough passphrase',
        })
      ).status,
    );
  }
  expect(more).toEqual([303, 303, 303, 429]);
});

it('hosted checkout page: a parallel burst from one address gets exactly the limit through', async () => {
  const w = await webWith({ CHECKOUT_REQUESTS_PER_MINUTE: '5' }, true);
  const statuses = (
    await Promise.all(
      Array.from({ length: 15 }, () => fetch(`${w.url}/checkout/cs_01JD8Z3K6Q2W4E5R6T7Y8V9X0P`).then((r) => r.status)),
    )
  ).sort();
  expect([count(statuses, 404), count(statuses, 429)]).toEqual([5, 10]);
});

it('made-up dashboard session cookies: a malformed one costs no look-up, a repeated one costs one, and an address is cut off after the limit', async () => {
  const w = await webWith({ SESSION_FAILURES_PER_MINUTE: '5', TRUSTED_PROXIES: 'loopback' });
  // Every look-up of these tokens is refused (unauthorized) by the account service: none was issued.
  const lookups = () => w.fakes.account!.requestsTo('getSession').length;
  const visit = (cookie: string, address: string) =>
    fetch(`${w.url}/dashboard`, {
      headers: { cookie: `lk_session=${cookie}`, 'x-forwarded-for': address },
      redirect: 'manual',
    });
  const token = () => randomBytes(32).toString('base64url');
  const start = lookups();

  // Not shaped like a session token: no look-up at all, and the browser is told to drop it.
  const malformed = await visit('not-a-session', '198.51.100.9');
  expect(malformed.status).toBe(303);
  expect(malformed.headers.get('set-cookie')).toMatch(/^lk_session=; Path=\/dashboard; Max-Age=0/);
  expect(lookups()).toBe(start);

  // A well-formed token nobody issued: asked about once, then remembered (and cleared from the browser).
  const madeUp = token();
  for (let i = 0; i < 5; i++) expect((await visit(madeUp, '198.51.100.9')).status).toBe(303);
  expect(lookups()).toBe(start + 1);

  // New made-up tokens from the same address: looked up until the address is over its limit of 5
  // unknown tokens (the one above was the first), then no more, whatever it sends.
  for (let i = 0; i < 12; i++) expect((await visit(token(), '198.51.100.9')).status).toBe(303);
  expect(lookups()).toBe(start + 6);

  // Another address is looked up as before.
  await visit(token(), '203.0.113.4');
  expect(lookups()).toBe(start + 7);
});
