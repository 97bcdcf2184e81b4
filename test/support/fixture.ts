import { randomBytes } from 'node:crypto';
import { client, startStack, type Stack } from './stack';
import { EventLog } from './events';

export interface Fixture {
  stack: Stack;
  /** HTTP client authenticated as `accountId`. */
  api: ReturnType<typeof client>;
  accountId: string;
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
