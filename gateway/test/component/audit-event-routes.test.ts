import { AppError, REQUEST_ORIGIN_KEY, decodeOrigin } from '@licensing/runtime';
import type { AccountServiceService, ListAuditEventsRequest, RequestOrigin } from '@licensing/proto';
import type { FakeHandlers } from '@licensing/test-support';
import { client } from '../../../test/support/stack';
import { expectProblem } from '../../../test/support/problem-json';
import { accountHandlers, fakeVendor } from './fake-service-answers';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';

// GET /api/v1/audit-events at the gateway, over an account service faked with what it answers: the
// query passed on (action as the event type), the REST shape of an entry (null for what is empty), the
// admin role it needs, 400 for a malformed query, and the origin every call carries (who asked, from
// where): what the services write on the events. What the account service keeps and filters:
// services/account/test/component/audit-log.test.ts.

const vendor = fakeVendor('pro');
const supportKey = `lk_full_support_${vendor.account.id}`;
vendor.roleKeys = { [supportKey]: 'support' };
const origins: (RequestOrigin | undefined)[] = [];
let h: GatewayWithFakeServices;

function auditHandlers(): Partial<FakeHandlers<typeof AccountServiceService>> {
  return {
    listAuditEvents: (req: ListAuditEventsRequest, { metadata }) => {
      origins.push(decodeOrigin(metadata.get(REQUEST_ORIGIN_KEY)[0]));
      if (req.since === 'refuse') throw AppError.invalid('since', 'since must be an ISO 8601 time');
      return {
        data: [
          {
            id: 'aud_01J00000000000000000000000',
            at: '2026-05-01T12:00:00.000Z',
            actor: { type: 'system', id: 'system', name: '' },
            event_type: req.event_type || 'license.expired',
            target: { type: 'license', id: req.target_id || 'lic_1' },
            request_id: '',
            ip: '',
            user_agent: '',
          },
        ],
        page: { has_more: true, next_cursor: 'aud_01J00000000000000000000000' },
      };
    },
  };
}

beforeAll(async () => {
  h = await startGatewayWithFakeServices({
    handlers: { account: { ...accountHandlers([vendor]), ...auditHandlers() } },
  });
});

afterAll(async () => {
  await h?.stop();
});

describe('GET /api/v1/audit-events', () => {
  it('passes the filters on and answers a page of entries in their REST shape', async () => {
    const since = '2026-05-01T00:00:00Z';
    const r = await client(h.url, vendor.apiKey)(
      'GET',
      `/api/v1/audit-events?action=license.revoked&target_id=lic_9&actor_id=key_x&since=${since}&limit=5`,
      undefined,
      { 'user-agent': 'audit-reader/1.0' },
    );
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      data: [
        {
          id: 'aud_01J00000000000000000000000',
          at: '2026-05-01T12:00:00.000Z',
          actor: { type: 'system', id: 'system', name: null },
          action: 'license.revoked',
          target: { type: 'license', id: 'lic_9' },
          request_id: null,
          ip: null,
          user_agent: null,
        },
      ],
      has_more: true,
      next_cursor: 'aud_01J00000000000000000000000',
    });
    expect(h.fakes.account.requestsTo('listAuditEvents').at(-1)).toMatchObject({
      account_id: vendor.account.id,
      page: { limit: 5, starting_after: '' },
      event_type: 'license.revoked',
      target_id: 'lic_9',
      actor_id: 'key_x',
      since,
      until: '',
    });
    // Who asked travels with the call: the key, the client's address and its agent.
    expect(origins.at(-1)).toEqual({
      actor: { type: 'api_key', id: expect.stringMatching(/^key_/) },
      ip: expect.stringMatching(/127\.0\.0\.1/),
      user_agent: 'audit-reader/1.0',
    });
  });

  it('needs the admin role: a support key is 403 forbidden, naming both roles', async () => {
    const r = await client(h.url, supportKey)('GET', '/api/v1/audit-events');
    expectProblem(r, 403, 'forbidden');
    expect(r.body.detail).toContain('support');
    expect(r.body.detail).toContain('admin');
  });

  it.each([
    ['limit=0', 'limit'],
    ['starting_after=nope', 'starting_after'],
    [`action=${'a'.repeat(65)}`, 'action'],
    ['since=a&since=b', 'since'],
    ['colour=red', 'colour'],
  ])('refuses ?%s with 400 naming %s', async (query, field) => {
    const r = await client(h.url, vendor.apiKey)('GET', `/api/v1/audit-events?${query}`);
    expectProblem(r, 400, 'invalid_request');
    expect(JSON.stringify(r.body)).toContain(field);
  });

  it("answers the service's refusal of a filter as its 400", async () => {
    const r = await client(h.url, vendor.apiKey)('GET', '/api/v1/audit-events?since=refuse');
    expectProblem(r, 400, 'invalid_request');
    expect(r.body.detail).toContain('since');
  });
});
