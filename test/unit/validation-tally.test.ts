import { createLogger } from '@licensing/runtime';
import type { RecordValidationsRequest } from '@licensing/proto';
import type { Clients } from '../../gateway/src/clients';
import { ValidationTally } from '../../gateway/src/validation-tally';

// What a gateway sends the licence service about the validations it answered from its cache.
function tallyWith(send: (req: RecordValidationsRequest) => Promise<object>) {
  const clients = { licenses: { recordValidations: send } } as unknown as Clients;
  return new ValidationTally(clients, createLogger('test', 'silent'), 1000);
}

describe('the gateway’s validation tally', () => {
  const at = new Date('2026-06-01T10:42:13Z');

  it('sends counts per hour and answer code, and recent validations grouped by licence, hour, code and machine', async () => {
    const sent: RecordValidationsRequest[] = [];
    const tally = tallyWith(async (req) => {
      sent.push(req);
      return {};
    });
    tally.record('acc_1', 'valid', true, at);
    tally.record('acc_1', 'valid', true, at);
    tally.record('acc_1', 'not_found', false, at);
    tally.validated('acc_1', 'lic_1', at, 'valid', 'mac-1');
    tally.validated('acc_1', 'lic_1', new Date(at.getTime() + 1000), 'valid', 'mac-1');
    tally.validated('acc_1', 'lic_1', at, 'suspended', '');
    await tally.flush();
    expect(sent).toHaveLength(1);
    expect(sent[0].tallies).toEqual([
      {
        account_id: 'acc_1',
        hour: '2026-06-01T10:00:00.000Z',
        validations: 3,
        valid: 2,
        by_code: { valid: 2, not_found: 1 },
      },
    ]);
    expect(sent[0].seen).toEqual([
      {
        account_id: 'acc_1',
        license_id: 'lic_1',
        hour: '2026-06-01T10:00:00.000Z',
        code: 'valid',
        fingerprint: 'mac-1',
        count: 2,
        last_at: '2026-06-01T10:42:14.000Z',
      },
      {
        account_id: 'acc_1',
        license_id: 'lic_1',
        hour: '2026-06-01T10:00:00.000Z',
        code: 'suspended',
        fingerprint: '',
        count: 1,
        last_at: '2026-06-01T10:42:13.000Z',
      },
    ]);
    await tally.flush();
    expect(sent).toHaveLength(1); // nothing new, nothing sent
  });

  it('keeps what a failed send carried and adds it to the next one', async () => {
    const sent: RecordValidationsRequest[] = [];
    let fail = true;
    const tally = tallyWith(async (req) => {
      if (fail) throw new Error('licence service away');
      sent.push(req);
      return {};
    });
    tally.record('acc_1', 'revoked', false, at);
    tally.validated('acc_1', 'lic_1', at, 'revoked', 'mac-1');
    await tally.flush();
    fail = false;
    tally.record('acc_1', 'revoked', false, at);
    tally.validated('acc_1', 'lic_1', at, 'revoked', 'mac-1');
    await tally.flush();
    expect(sent[0].tallies[0]).toMatchObject({ validations: 2, valid: 0, by_code: { revoked: 2 } });
    expect(sent[0].seen).toEqual([expect.objectContaining({ code: 'revoked', fingerprint: 'mac-1', count: 2 })]);
  });
});
