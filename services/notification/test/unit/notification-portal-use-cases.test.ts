import { AppError } from '@licensing/runtime';
import { digestSecret } from '../../src/domain/portal';
import type { NotificationDeps } from '../../src/use-cases/deps';
import { getPortalSession, redeemPortalLink, requestPortalLink, requestSeatRescue } from '../../src/use-cases/portal';
import { renderPortalMail } from '../../src/use-cases/render-portal';
import { FakeClock } from '../../../../test/support/fakes/common';
import { FakeEmailStore, FakePortalStore } from '../../../../test/support/fakes/notification-stores';

// The portal use cases over in-memory stores and a hand-moved clock: request keys, the seat rescue
// window, what the sender decides at send time, and the rules of redeeming a link.

const HOUR = 3_600_000;

function setUp(holders: Record<string, string[]> = {}) {
  const emails = new FakeEmailStore();
  const portal = new FakePortalStore();
  const clock = new FakeClock('2027-01-01T10:00:05.000Z');
  const licencesByKey: Record<string, { key: string; customer_email: string; product_id: string }> = {
    'KEY-1': { key: 'KEY-1', customer_email: 'Owner@Example.com', product_id: 'prd_1' },
    'KEY-ERASED': { key: 'KEY-ERASED', customer_email: 'erased-1a2b@erased.invalid', product_id: 'prd_1' },
  };
  const deps = {
    emails: emails.asStore(),
    portal: portal.asStore(),
    clock,
    publicBaseUrl: 'https://lic.example',
    accounts: { getAccount: async () => ({ name: 'Acme', support_email: 'help@acme.example' }) },
    products: { getProduct: async () => ({ name: 'Pixel' }) },
    licenses: {
      getLicense: async ({ account_id, key }: { account_id: string; key: string }) => {
        const l = account_id === 'acct_1' ? licencesByKey[key] : undefined;
        if (!l) throw AppError.notFound('licence');
        return l;
      },
      holdsLicences: async ({ account_id, email }: { account_id: string; email: string }) => ({
        holds: (holders[account_id] ?? []).includes(email),
      }),
    },
  } as unknown as NotificationDeps;
  return { deps, emails, portal, clock };
}

async function refusal(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

const tokenOf = (text: string) => /token=([A-Za-z0-9_-]{43})/.exec(text)![1];

describe('portal sign-in requests', () => {
  it('one queued mail per (account, e-mail) and minute, the address lower-cased; duplicates are silently fine', async () => {
    const { deps, emails, clock } = setUp();
    await requestPortalLink(deps, 'acct_1', ' Ann@Example.com ');
    await requestPortalLink(deps, 'acct_1', 'ann@example.com');
    expect([...emails.rows.values()].map((r) => [r.to, r.template, r.license_key])).toEqual([
      ['ann@example.com', 'portal_link', ''],
    ]);
    clock.advance(60_000);
    await requestPortalLink(deps, 'acct_1', 'ann@example.com');
    await requestPortalLink(deps, 'acct_2', 'ann@example.com');
    expect(emails.rows.size).toBe(3);
  });

  it('the sender drops a request for an address holding no licence of the account, and makes no link', async () => {
    const { deps, emails, portal } = setUp({ acct_2: ['ann@example.com'] });
    await requestPortalLink(deps, 'acct_1', 'ann@example.com');
    const [mail] = emails.rows.values();
    expect(await renderPortalMail(deps, mail)).toBeNull();
    expect(portal.links.size).toBe(0);
  });

  it('each attempt makes a new token: only the last sent link works, and no raw token is stored', async () => {
    const { deps, emails, portal } = setUp({ acct_1: ['ann@example.com'] });
    await requestPortalLink(deps, 'acct_1', 'ann@example.com');
    const [mail] = emails.rows.values();
    const first = tokenOf((await renderPortalMail(deps, mail))!.text);
    const second = tokenOf((await renderPortalMail(deps, mail))!.text);
    expect(second).not.toBe(first);
    expect(portal.links.size).toBe(1);
    expect(JSON.stringify([...portal.links.values()])).not.toContain(second);
    expect((await refusal(redeemPortalLink(deps, 'acct_1', first))).code).toBe('invalid_request');
    expect((await redeemPortalLink(deps, 'acct_1', second)).session.email).toBe('ann@example.com');
  });
});

describe('redeeming a link', () => {
  async function linked(holders = { acct_1: ['ann@example.com'] }) {
    const s = setUp(holders);
    await requestPortalLink(s.deps, 'acct_1', 'ann@example.com');
    const token = tokenOf((await renderPortalMail(s.deps, [...s.emails.rows.values()][0]))!.text);
    return { ...s, token };
  }

  it("another account's attempt is refused and uses nothing up; the right account then signs in once", async () => {
    const { deps, token, portal } = await linked();
    const other = await refusal(redeemPortalLink(deps, 'acct_2', token));
    const opened = await redeemPortalLink(deps, 'acct_1', token);
    expect(opened.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(portal.sessions.has(digestSecret(opened.token))).toBe(true);
    const again = await refusal(redeemPortalLink(deps, 'acct_1', token));
    expect(again.message).toBe(other.message);
    expect(again.code).toBe('invalid_request');
  });

  it('works until its hour is over, not at it', async () => {
    const { deps, token, clock } = await linked();
    clock.advance(HOUR);
    expect((await refusal(redeemPortalLink(deps, 'acct_1', token))).code).toBe('invalid_request');
  });

  it('a session lasts twelve hours, for its account only', async () => {
    const { deps, token, clock } = await linked();
    const { token: cookie } = await redeemPortalLink(deps, 'acct_1', token);
    expect((await getPortalSession(deps, 'acct_1', cookie)).email).toBe('ann@example.com');
    expect((await refusal(getPortalSession(deps, 'acct_2', cookie))).code).toBe('unauthorized');
    clock.advance(12 * HOUR);
    expect((await refusal(getPortalSession(deps, 'acct_1', cookie))).code).toBe('unauthorized');
  });
});

describe('seat rescue', () => {
  it('queues a mail to the owner, refuses another within the hour with the wait, allows one after it', async () => {
    const { deps, clock } = setUp();
    const first = await requestSeatRescue(deps, 'acct_1', 'KEY-1');
    expect(first).toMatchObject({ template: 'seat_rescue', to: 'owner@example.com', license_key: 'KEY-1' });
    clock.advance(HOUR - 90_000);
    const limited = await refusal(requestSeatRescue(deps, 'acct_1', 'KEY-1'));
    expect(limited.code).toBe('rate_limited');
    expect(limited.retryAfterS).toBe(90);
    clock.advance(90_000);
    expect((await requestSeatRescue(deps, 'acct_1', 'KEY-1'))._id).not.toBe(first._id);
  });

  it("the link of its mail opens on that licence; an erased owner is conflict, another account's key not_found", async () => {
    const { deps, emails } = setUp();
    const queued = await requestSeatRescue(deps, 'acct_1', 'KEY-1');
    const mail = (await renderPortalMail(deps, emails.rows.get(queued._id)!))!;
    expect(mail.subject).toBe('Free a seat for Pixel');
    const { session } = await redeemPortalLink(deps, 'acct_1', tokenOf(mail.text));
    expect(session).toMatchObject({ email: 'owner@example.com', license_key: 'KEY-1' });
    expect((await refusal(requestSeatRescue(deps, 'acct_1', 'KEY-ERASED'))).code).toBe('conflict');
    expect((await refusal(requestSeatRescue(deps, 'acct_2', 'KEY-1'))).code).toBe('not_found');
  });
});
