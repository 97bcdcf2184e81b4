import { randomBytes } from 'node:crypto';
import { SessionResponse } from '@licensing/proto';
import { AppError } from '@licensing/runtime';
import { eventually } from '../../../test/support/eventually';
import { WebClient } from '../../../test/support/web-client';
import { fakeOwner, sessionHandlers, type FakeOwner } from './fake-account-answers';
import { startWebWithFakeServices, type WebWithFakeServices } from './web-with-fake-services';

// The dashboard's pages of two-factor sign-in over a faked account service (which judges the codes:
// services/account/test/component/two-factor.test.ts): a right password of a person with it leads to
// the code form with a token in its own cookie and no session; a wrong code comes back on the form,
// an exhausted sign-in starts over; wrong codes and passwords are throttled per address, and a member
// whose password someone guesses from another address still signs in from theirs; a member the account
// sends to enrolment reaches only the enrolment pages; the enrolment page shows the QR code and secret
// and shows them again beside a refused code; only an admin may require it of everyone.

const CODE = '123456';
const withMfa = fakeOwner();
const plain = fakeOwner();
const mustEnrol = fakeOwner();
const developer: FakeOwner = { ...fakeOwner(), role: 'developer' };
const waiting = new Map<string, FakeOwner>();
const sessions = new Map<string, FakeOwner>();
const requireCalls: boolean[] = [];
let w: WebWithFakeServices;

const base = sessionHandlers([withMfa, plain, mustEnrol, developer], sessions);
const full = (owner: FakeOwner, token: string, extra: Partial<SessionResponse> = {}) =>
  SessionResponse.fromPartial({
    token,
    csrf_token: `csrf_${token.slice(0, 16)}`,
    expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    user: owner.user,
    account: owner.account,
    role: owner.role ?? 'owner',
    must_enrol_mfa: owner === mustEnrol,
    ...extra,
  });

beforeAll(async () => {
  w = await startWebWithFakeServices({
    handlers: {
      account: {
        ...base,
        signIn: (req, ...rest) => {
          if (req.email !== withMfa.user.email || req.password !== withMfa.password) return base.signIn!(req, ...rest);
          const token = randomBytes(32).toString('base64url');
          waiting.set(token, withMfa);
          return full(withMfa, token, { code_required: true });
        },
        getSession: ({ token }) => {
          const owner = sessions.get(token);
          if (!owner) throw new AppError('unauthorized', 'no such session');
          return full(owner, '');
        },
        completeSignIn: ({ token, code }) => {
          const owner = waiting.get(token);
          if (!owner)
            throw new AppError('unauthorized', 'this sign-in has expired; enter your e-mail and password again');
          if (code !== CODE)
            throw new AppError('unauthorized', 'that code is wrong (or a recovery code already used)', [
              { field: 'code', message: 'is wrong' },
            ]);
          waiting.delete(token);
          const fresh = randomBytes(32).toString('base64url');
          sessions.set(fresh, owner);
          return full(owner, fresh);
        },
        getMfaStatus: () => ({ enabled: false, recovery_codes_left: 0, required: true }),
        beginMfaEnrolment: () => ({
          secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
          otpauth_uri: 'otpauth://totp/Acme:ann@example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Acme',
        }),
        confirmMfaEnrolment: ({ code }) => {
          if (code !== CODE)
            throw AppError.invalid('code', 'that code is wrong: check the app shows this account, and its clock');
          return { recovery_codes: Array.from({ length: 10 }, (_, i) => `abcde-${String(i).padStart(5, '0')}`) };
        },
        // The customer portal's vendor look-up (the form-size case below).
        getAccount: () => plain.account,
        setRequireMfa: ({ require_mfa }) => {
          requireCalls.push(require_mfa);
          return plain.account;
        },
      },
    },
    settings: {
      SIGNIN_FAILURES_PER_ADDRESS: '6',
      SIGNIN_FAILURES_PER_EMAIL: '3',
      TRUSTED_PROXIES: 'loopback',
      REDIS_TIMEOUT_MS: '5000',
    },
  });
  await eventually(async () =>
    expect(await (await fetch(`http://127.0.0.1:${w.web.metricsPort}/metrics`)).text()).toMatch(
      /^licensing_rate_limit_fallback(\{[^}]*\})? 0$/m,
    ),
  );
});

afterAll(async () => {
  await w?.stop();
});

/** A client at its own address (behind the trusted proxy): each test's throttles are its own. */
function clientAt(): WebClient {
  const web = new WebClient(w.url);
  web.headers['x-forwarded-for'] = `198.51.100.${1 + Math.floor(Math.random() * 250)}`;
  return web;
}

async function submitCode(web: WebClient, code: string) {
  const form = await web.get('/dashboard/signin/code');
  return web.post('/dashboard/signin/code', { _csrf: WebClient.csrf(form.html), code });
}

describe('the sign-in code form', () => {
  it('comes after a right password, with no session until the right code', async () => {
    const web = clientAt();
    const signedIn = await web.signIn(withMfa.user.email, withMfa.password);
    expect([signedIn.status, signedIn.location]).toEqual([303, '/dashboard/signin/code']);
    expect(web.cookies.has('lk_session')).toBe(false);
    expect(web.setCookieHeaders.join('\n')).toMatch(/lk_signin=[^;]+;.*SameSite=Strict/);
    expect((await web.get('/dashboard/settings/mfa')).location).toBe('/dashboard/signin');
    const wrong = await submitCode(web, '654321');
    expect(wrong.status).toBe(401);
    expect(wrong.html).toContain('that code is wrong');
    const right = await submitCode(web, CODE);
    expect([right.status, right.location]).toEqual([303, '/dashboard']);
    expect(web.cookies.has('lk_signin')).toBe(false);
    expect((await web.get('/dashboard/settings/mfa')).status).toBe(200);
  });

  it('sends a visitor without a waiting sign-in to the sign-in page, and refuses a form without its token', async () => {
    const web = clientAt();
    expect((await web.get('/dashboard/signin/code')).location).toBe('/dashboard/signin');
    web.cookies.set('lk_signin', 'made-up');
    expect((await web.post('/dashboard/signin/code', { _csrf: 'forged', code: CODE })).status).toBe(403);
    const form = await web.get('/dashboard/signin/code');
    const expired = await web.post('/dashboard/signin/code', { _csrf: WebClient.csrf(form.html), code: CODE });
    expect(expired.status).toBe(401);
    expect(expired.html).toContain('this sign-in has expired');
    expect(web.cookies.has('lk_signin')).toBe(false);
  });

  it('counts wrong codes against the address, as wrong passwords are', async () => {
    const web = clientAt();
    await web.signIn(withMfa.user.email, withMfa.password);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await submitCode(web, '000000')).status);
    // SIGNIN_FAILURES_PER_ADDRESS is 6 (the right password before them was given back).
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429, 429]);
  });
});

it('guesses at a member from another address never lock that member out of theirs', async () => {
  const attacker = clientAt();
  for (let i = 0; i < 4; i++) await attacker.signIn(plain.user.email, `wrong guess ${i}`);
  expect((await attacker.signIn(plain.user.email, 'another guess')).status).toBe(429);
  const member = clientAt();
  member.headers['x-forwarded-for'] = '203.0.113.9';
  expect((await member.signIn(plain.user.email, plain.password)).status).toBe(303);
});

describe('a member the account sends to enrolment', () => {
  it('reaches only the enrolment pages; the QR code and secret show, and again beside a refused code', async () => {
    const web = clientAt();
    expect((await web.signIn(mustEnrol.user.email, mustEnrol.password)).location).toBe('/dashboard');
    for (const path of ['/dashboard', '/dashboard/products', '/dashboard/settings'])
      expect((await web.get(path)).location).toBe('/dashboard/settings/mfa');
    const state = await web.get('/dashboard/settings/mfa');
    expect(state.html).toContain('requires two-factor sign-in: set it up to go on');
    const enrol = await web.post('/dashboard/settings/mfa/enrol', { _csrf: WebClient.csrf(state.html) });
    expect(enrol.status).toBe(200);
    expect(enrol.html).toMatch(/<img src="data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+"/);
    expect(enrol.html).toContain('JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP');
    const form = (code: string, extra: Record<string, string> = {}) => ({
      _csrf: WebClient.csrf(enrol.html),
      code,
      secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
      otpauth_uri: 'otpauth://totp/Acme:ann@example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Acme',
      ...extra,
    });
    const refused = await web.post('/dashboard/settings/mfa/confirm', form('000000'));
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('that code is wrong');
    expect(refused.html).toContain('data-testid="mfa-qr"');
    // A tampered URI is not drawn again: the state page and the message instead.
    const tampered = await web.post(
      '/dashboard/settings/mfa/confirm',
      form('000000', { otpauth_uri: 'javascript:alert(1)' }),
    );
    expect(tampered.status).toBe(400);
    expect(tampered.html).not.toContain('javascript:alert(1)');
    const done = await web.post('/dashboard/settings/mfa/confirm', form(CODE));
    expect(done.status).toBe(200);
    expect(done.html.match(/<li><code>abcde-\d{5}<\/code><\/li>/g)).toHaveLength(10);
  });
});

it('only an admin or the owner may require two-factor sign-in of everyone', async () => {
  const dev = clientAt();
  await dev.signIn(developer.user.email, developer.password);
  const page = await dev.get('/dashboard/settings/mfa');
  const refused = await dev.post('/dashboard/settings/require-mfa', {
    _csrf: WebClient.csrf(page.html),
    require_mfa: 'on',
  });
  expect(refused.status).toBe(403);
  expect(requireCalls).toEqual([]);
});

it('a form with more fields than allowed is 413 with a page, never a 500, in the dashboard and the customer portal', async () => {
  const many = new URLSearchParams(Array.from({ length: 60 }, (_, i) => [`_csrf`, `x${i}`])).toString();
  const post = (path: string) =>
    fetch(`${w.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: many,
    });
  for (const path of ['/dashboard/signin/code', `/portal/${plain.account.id}/sign-in`]) {
    const res = await post(path);
    expect([path, res.status]).toEqual([path, 413]);
    expect(await res.text()).toContain('Too much data');
  }
});
