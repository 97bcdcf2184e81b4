import { WebClient } from '../../../test/support/web-client';
import { fakeOwner, sessionHandlers } from './fake-account-answers';
import { startWebWithFakeServices, type WebWithFakeServices } from './web-with-fake-services';

// The dashboard lets a signed-in member do what their role allows (the session says it), as the API
// lets a key: a support member reads and may change their own password, and is refused (403, before
// any service is asked) creating a product or an API key. The rules: web/test/unit/dashboard-roles.test.ts.

let w: WebWithFakeServices;
const support = { ...fakeOwner('support@example.com'), role: 'support' };

beforeAll(async () => {
  w = await startWebWithFakeServices({ handlers: { account: sessionHandlers([support]) } });
});

afterAll(async () => {
  await w?.stop();
});

it('a support member is refused what needs a developer or an admin, and keeps what is theirs', async () => {
  const web = new WebClient(w.url);
  expect((await web.signIn(support.user.email, support.password)).status).toBe(303);
  const own = await web.get('/dashboard/settings/password');
  expect(own.status).toBe(200);
  const csrf = WebClient.csrf(own.html);
  for (const [path, form, needed] of [
    ['/dashboard/products', { name: 'Not mine to make' }, 'developer'],
    ['/dashboard/settings/keys', { name: 'k', scope: 'full' }, 'admin'],
    ['/dashboard/webhooks', { url: 'https://example.com/hook' }, 'developer'],
  ] as const) {
    const refused = await web.post(path, { _csrf: csrf, ...form });
    expect(refused.status).toBe(403);
    expect(refused.html).toContain(`Your role (support) cannot do this: it needs ${needed} or above.`);
  }
  expect(w.fakes.account!.requestsTo('createApiKey')).toEqual([]);
  const changed = await web.post('/dashboard/settings/password', {
    _csrf: csrf,
    current_password: support.password,
    new_password: 'a brand new passphrase',
  });
  expect(changed.status).toBe(200);
});
