import { randomBytes } from 'node:crypto';
import { client, startStack, type Stack } from './stack';
import { EventLog } from './events';
import { WebClient } from './web-client';

export interface Fixture {
  stack: Stack;
  /** HTTP client authenticated as `accountId`. */
  api: ReturnType<typeof client>;
  accountId: string;
  /** The account's full API key (what `api` sends). */
  apiKey: string;
  events: EventLog;
}

/**
 * The usual e2e set-up: a stack of its own, one account with a full key, and a
 * reader of the stack's event stream, torn down after the file's tests.
 */
export function useStackWithAccount(): Fixture {
  const f = {} as Fixture;
  beforeAll(async () => {
    f.stack = await startStack();
    const acct = await f.stack.newAccount();
    f.accountId = acct.accountId;
    f.apiKey = acct.apiKey;
    f.api = client(f.stack.url, acct.apiKey);
    f.events = await EventLog.open(f.stack.topology.natsUrl, f.stack.topology.stream);
  });
  afterAll(async () => {
    await f.events?.close();
    await f.stack?.stop();
  });
  return f;
}

/** A stack of the file's own, started before its tests and stopped after them (read `.stack` inside tests). */
export function useStack(): { stack: Stack } {
  const f = {} as { stack: Stack };
  beforeAll(async () => {
    f.stack = await startStack();
  });
  afterAll(async () => {
    await f.stack?.stop();
  });
  return f;
}

/** A fresh address for a dashboard sign-up (sign-ups of one address are refused twice). */
export const ownerEmail = (): string => `owner-${randomBytes(4).toString('hex')}@example.com`;

/**
 * A vendor signed up through the dashboard, with a full API key made in Settings: the signed-in
 * browser, the CSRF token of its last page, and an API client with the new key.
 */
export async function dashboardOwner(stack: Pick<Stack, 'url' | 'topology'>, prefix = 'owner') {
  const web = new WebClient(stack.url, stack.topology);
  await web.signUp(`${prefix}-${randomBytes(4).toString('hex')}@example.com`);
  const settings = await web.get('/dashboard/settings');
  const made = await web.post('/dashboard/settings/keys', {
    _csrf: WebClient.csrf(settings.html),
    name: 'api',
    scope: 'full',
  });
  const api = client(stack.url, /data-testid="new-key">([^<]+)</.exec(made.html)![1]);
  return { web, api, csrf: WebClient.csrf(made.html) };
}

/** The message a dashboard form shows under the named field. */
export const fieldError = (html: string, name: string): string | undefined =>
  new RegExp(`<p class="field-error" id="${name}-error">([^<]+)</p>`).exec(html)?.[1];
