import { connect, type NatsConnection } from 'nats';
import type { Connection } from 'mongoose';
import type { DomainEvent, RequestOrigin } from '@licensing/proto';
import { connectMongo, natsServers, newId, requestOrigin, withCallScope } from '@licensing/runtime';
import { eventually } from '../../../../test/support/eventually';
import { AuditStore, auditModel } from '../../src/store/audit';
import { pruneAudit } from '../../src/jobs/audit-retention';
import { type AccountClient, type RunningAccount, startAccount } from './running-account';

// The audit log as the account service keeps it (real FerretDB and NATS): every event on the stream,
// whichever service published it, becomes one entry with who asked (the request origin the event
// carries, or the system), listed newest first with filters and pages, one account's never another's;
// an event delivered twice is one entry; entries past the retention are removed by the job. What the
// gateway puts on a request, and a change made through the whole system: test/system/licence-journey.test.ts.

let svc: RunningAccount;
let gateway: AccountClient;
let operator: AccountClient;
let nc: NatsConnection;
let db: Connection;
/** The log's store over the service's database, for entries older than any event a test would publish. */
let store: AuditStore;
let accountId: string;
let otherId: string;

beforeAll(async () => {
  // The retention job every 200 ms, so the test sees it remove what it must.
  svc = await startAccount(undefined, { AUDIT_RETENTION_INTERVAL_MS: '200', AUDIT_RETENTION_DAYS: '30' });
  ({ gateway, operator } = svc);
  nc = await connect({ servers: natsServers(svc.topology.natsUrl) });
  db = await connectMongo(svc.topology.mongoUrl, `${svc.topology.dbPrefix}_account`);
  store = new AuditStore(auditModel(db));
  accountId = (await operator.call.createAccount({ name: 'Audited', plan: 'pro' })).account!.id;
  otherId = (await operator.call.createAccount({ name: 'Someone else', plan: 'pro' })).account!.id;
});

afterAll(async () => {
  await nc?.close();
  await db?.close();
  await svc?.stop();
});

const KEY_ACTOR: RequestOrigin = requestOrigin(
  { type: 'api_key', id: 'key_01TESTTESTTESTTESTTESTTEST' },
  '203.0.113.7',
  'curl/8.5.0',
);

/** Publishes an event as its owning service would (on its type's subject), once or `times` times. */
async function publish(event: DomainEvent, times = 1): Promise<void> {
  const js = nc.jetstream();
  for (let i = 0; i < times; i++)
    await js.publish(`${svc.topology.subjectPrefix}.${event.type}`, JSON.stringify(event), {
      msgID: `${event.id}-${i}`,
    });
}

function suspended(account: string, licenseId: string, origin?: RequestOrigin, at = new Date()): DomainEvent {
  return {
    id: newId('evt'),
    type: 'license.suspended',
    account_id: account,
    created_at: at.toISOString(),
    ...(origin ? { request_id: 'req_audit_test', origin } : {}),
    data: { license: { id: licenseId } },
  } as unknown as DomainEvent;
}

const list = (req: Partial<Parameters<AccountClient['call']['listAuditEvents']>[0]> = {}) =>
  gateway.call.listAuditEvents({
    account_id: accountId,
    page: { limit: 100, starting_after: '' },
    actor_id: '',
    event_type: '',
    target_id: '',
    since: '',
    until: '',
    ...req,
  });

async function entriesAbout(targetId: string, account = accountId) {
  return (await list({ account_id: account, target_id: targetId })).data;
}

describe('an event becomes an entry', () => {
  it('with the actor, request, address and agent the event carries, and the target it is about', async () => {
    const event = suspended(accountId, 'lic_audit_one', KEY_ACTOR);
    await publish(event);
    const [entry] = await eventually(async () => {
      const found = await entriesAbout('lic_audit_one');
      expect(found).toHaveLength(1);
      return found;
    });
    expect(entry).toEqual({
      id: expect.stringMatching(/^aud_[0-9A-Z]{26}$/),
      at: event.created_at,
      actor: { type: 'api_key', id: KEY_ACTOR.actor.id, name: '' },
      event_type: 'license.suspended',
      target: { type: 'license', id: 'lic_audit_one' },
      request_id: 'req_audit_test',
      ip: '203.0.113.7',
      user_agent: 'curl/8.5.0',
    });
  });

  it('without an origin it is the system’s (a payment, a renewal, a sweep)', async () => {
    await publish(suspended(accountId, 'lic_audit_system'));
    const [entry] = await eventually(async () => {
      const found = await entriesAbout('lic_audit_system');
      expect(found).toHaveLength(1);
      return found;
    });
    expect(entry).toMatchObject({
      actor: { type: 'system', id: 'system', name: 'system' },
      request_id: '',
      ip: '',
      user_agent: '',
    });
  });

  it('delivered twice (another message id, the same event) is one entry', async () => {
    await publish(suspended(accountId, 'lic_audit_twice', KEY_ACTOR), 3);
    await publish(suspended(accountId, 'lic_audit_after', KEY_ACTOR));
    // The event after the copies is there: so are the copies, if they made entries.
    await eventually(async () => expect(await entriesAbout('lic_audit_after')).toHaveLength(1));
    expect(await entriesAbout('lic_audit_twice')).toHaveLength(1);
  });

  it("a key's own change names the key by its name: the origin travels with the call onto the event", async () => {
    const maker = await operator.call.createApiKey({ account_id: accountId, scope: 'full', name: 'Deploy bot' });
    // As the gateway calls on a key's request: its origin in the call's metadata (the runtime's client
    // sets it from the request's scope; here it is set by hand).
    const origin = requestOrigin({ type: 'api_key', id: maker.api_key!.id }, '198.51.100.4', 'deploy-bot/2.0');
    const made = await withCallScope(
      'req_made_by_bot',
      Number.POSITIVE_INFINITY,
      () => gateway.call.createApiKey({ account_id: accountId, scope: '', role: 'support', name: 'Support desk' }),
      undefined,
      origin,
    );
    const [entry] = await eventually(async () => {
      const found = await entriesAbout(made.api_key!.id);
      expect(found).toHaveLength(1);
      return found;
    });
    expect(entry).toMatchObject({
      actor: { type: 'api_key', id: maker.api_key!.id, name: 'Deploy bot' },
      event_type: 'api_key.created',
      target: { type: 'api_key', id: made.api_key!.id },
      request_id: 'req_made_by_bot',
      ip: '198.51.100.4',
      user_agent: 'deploy-bot/2.0',
    });
  });

  it('a malformed origin in a call is no origin: the change is the system’s, never refused', async () => {
    const made = await withCallScope(
      '',
      Number.POSITIVE_INFINITY,
      () => gateway.call.createApiKey({ account_id: accountId, scope: 'full', name: 'Odd origin' }),
      undefined,
      { actor: { type: 'root' as never, id: 'x' } },
    );
    const [entry] = await eventually(async () => {
      const found = await entriesAbout(made.api_key!.id);
      expect(found).toHaveLength(1);
      return found;
    });
    expect(entry.actor).toEqual({ type: 'system', id: 'system', name: 'system' });
  });
});

describe('listing', () => {
  const hour = 3_600_000;
  // Ten days ago, on the hour: well within the 30 days the service keeps here.
  const base = Math.floor(Date.now() / hour) * hour - 240 * hour;
  let ids: string[];

  beforeAll(async () => {
    // Five hours of one licence's changes, by a member then the system, published out of order.
    const events = [0, 1, 2, 3, 4].map((h) =>
      suspended(
        accountId,
        'lic_audit_paged',
        h % 2 ? undefined : requestOrigin({ type: 'member', id: 'usr_audit', name: 'ops@example.com' }),
        new Date(base + h * hour),
      ),
    );
    for (const e of [events[3], events[0], events[4], events[1], events[2]]) await publish(e);
    await eventually(async () => expect(await entriesAbout('lic_audit_paged')).toHaveLength(5));
    ids = (await entriesAbout('lic_audit_paged')).map((e) => e.id);
  });

  it('is newest first by the time of the change, whatever order the events came in', async () => {
    const found = await entriesAbout('lic_audit_paged');
    expect(found.map((e) => e.at)).toEqual([4, 3, 2, 1, 0].map((h) => new Date(base + h * hour).toISOString()));
  });

  it('pages with the cursor, each entry once', async () => {
    const first = await list({ target_id: 'lic_audit_paged', page: { limit: 2, starting_after: '' } });
    expect(first.data.map((e) => e.id)).toEqual(ids.slice(0, 2));
    expect(first.page).toEqual({ has_more: true, next_cursor: ids[1] });
    const second = await list({ target_id: 'lic_audit_paged', page: { limit: 2, starting_after: ids[1] } });
    expect(second.data.map((e) => e.id)).toEqual(ids.slice(2, 4));
    const last = await list({ target_id: 'lic_audit_paged', page: { limit: 2, starting_after: ids[3] } });
    expect(last.data.map((e) => e.id)).toEqual(ids.slice(4));
    expect(last.page).toEqual({ has_more: false, next_cursor: '' });
  });

  it('filters by actor, action and time (since inclusive, until exclusive), together with the cursor', async () => {
    const byMember = await list({ actor_id: 'usr_audit', target_id: 'lic_audit_paged' });
    expect(byMember.data.map((e) => e.actor?.name)).toEqual(['ops@example.com', 'ops@example.com', 'ops@example.com']);
    const bySystem = await list({ actor_id: 'system', event_type: 'license.suspended', target_id: 'lic_audit_paged' });
    expect(bySystem.data).toHaveLength(2);
    const window = await list({
      target_id: 'lic_audit_paged',
      since: new Date(base + hour).toISOString(),
      until: new Date(base + 3 * hour).toISOString(),
    });
    expect(window.data.map((e) => e.at)).toEqual([2, 1].map((h) => new Date(base + h * hour).toISOString()));
    const paged = await list({
      target_id: 'lic_audit_paged',
      since: new Date(base + hour).toISOString(),
      page: { limit: 100, starting_after: ids[1] },
    });
    expect(paged.data.map((e) => e.id)).toEqual(ids.slice(2, 4));
    expect((await list({ event_type: 'license.revoked', target_id: 'lic_audit_paged' })).data).toEqual([]);
  });

  it("shows one account nothing of another's", async () => {
    await publish(suspended(otherId, 'lic_audit_theirs', KEY_ACTOR));
    await eventually(async () => expect(await entriesAbout('lic_audit_theirs', otherId)).toHaveLength(1));
    expect(await entriesAbout('lic_audit_theirs')).toEqual([]);
    expect(await entriesAbout('lic_audit_paged', otherId)).toEqual([]);
  });

  it.each([
    [{ since: 'yesterday' }, 'since', 'must be an ISO 8601 time, e.g. 2026-01-31T00:00:00Z'],
    [{ until: '2026-13-45' }, 'until', 'must be an ISO 8601 time, e.g. 2026-01-31T00:00:00Z'],
    [{ since: '2026-03-02', until: '2026-03-01' }, 'until', 'must be after since'],
    [{ since: '2026-03-01', until: '2026-03-01' }, 'until', 'must be after since'],
    [{ actor_id: 'x'.repeat(201) }, 'actor_id', 'must be at most 200 characters'],
  ])('refuses %j, naming the field', async (req, field, message) => {
    await expect(list(req)).rejects.toMatchObject({ code: 'invalid_request', fieldErrors: [{ field, message }] });
  });
});

describe('retention', () => {
  it('the job removes every account’s entries past AUDIT_RETENTION_DAYS, and keeps the rest', async () => {
    const day = 86_400_000;
    const entry = (account: string, ageDays: number, target: string) => ({
      _id: newId('aud', Date.now() - ageDays * day),
      account_id: account,
      at: new Date(Date.now() - ageDays * day),
      actor: { type: 'system' as const, id: 'system', name: 'system' },
      action: 'license.expired',
      target: { type: 'license', id: target },
    });
    await store.record([
      entry(accountId, 45, 'lic_audit_old'),
      entry(otherId, 31, 'lic_audit_old_theirs'),
      entry(accountId, 29, 'lic_audit_kept'),
    ]);
    // The running service's job (every 200 ms, 30 days) removes the two old ones.
    await eventually(async () => {
      expect(await entriesAbout('lic_audit_old')).toEqual([]);
      expect(await entriesAbout('lic_audit_old_theirs', otherId)).toEqual([]);
    });
    expect(await entriesAbout('lic_audit_kept')).toHaveLength(1);
  });

  it('a pass removes what has expired in batches until none is left, and says how many', async () => {
    const old = new Date('2020-01-01T00:00:00Z');
    await store.record(
      Array.from({ length: 7 }, (_, i) => ({
        _id: newId('aud', old.getTime() + i),
        account_id: otherId,
        at: new Date(old.getTime() + i),
        actor: { type: 'system' as const, id: 'system' },
        action: 'license.expired',
        target: { type: 'license', id: `lic_audit_batch_${i}` },
      })),
    );
    // Another pass than the service's may find some already gone: together they removed all seven.
    const removed = await pruneAudit(store, new Date(), 30, 3);
    expect(removed).toBeLessThanOrEqual(7);
    expect(await db.collection('audit_events').countDocuments({ at: { $lt: new Date('2020-01-02') } })).toBe(0);
  });
});
