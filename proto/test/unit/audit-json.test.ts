import { AuditEvent } from '../../gen/licensing/v1/account';
import { auditEventJson } from '../../rules/audit';

// An audit entry as the API answers it and the operator's export prints it: null for what is empty,
// and a member's e-mail also as `email`.

const entry = (actor: { type: string; id: string; name: string }) =>
  AuditEvent.fromPartial({
    id: 'aud_01J00000000000000000000000',
    at: '2026-05-01T12:00:00.000Z',
    actor,
    event_type: 'license.suspended',
    target: { type: 'license', id: 'lic_1' },
    request_id: 'req_1',
    ip: '203.0.113.7',
    user_agent: '',
  });

it('names a member by e-mail twice (name and email), and says null for what the entry lacks', () => {
  expect(auditEventJson(entry({ type: 'member', id: 'user_1', name: 'ops@example.com' }))).toEqual({
    id: 'aud_01J00000000000000000000000',
    at: '2026-05-01T12:00:00.000Z',
    actor: { type: 'member', id: 'user_1', name: 'ops@example.com', email: 'ops@example.com' },
    action: 'license.suspended',
    target: { type: 'license', id: 'lic_1' },
    request_id: 'req_1',
    ip: '203.0.113.7',
    user_agent: null,
  });
});

it('gives a key its name and no email; a nameless actor a null name', () => {
  expect(auditEventJson(entry({ type: 'api_key', id: 'key_1', name: 'CI' })).actor).toEqual({
    type: 'api_key',
    id: 'key_1',
    name: 'CI',
  });
  expect(auditEventJson(entry({ type: 'license', id: 'lic_1', name: '' })).actor).toEqual({
    type: 'license',
    id: 'lic_1',
    name: null,
  });
});
