import { actionTypes, eventTypes, isEventType, type DomainEvent } from '@licensing/proto';
import { AppError, ownerOf } from '@licensing/runtime';
import { SYSTEM_ACTOR, auditEntryOf, auditFilter, retentionBound, targetOf } from '../../src/domain/audit';
import { pruneAudit } from '../../src/jobs/audit-retention';

// The audit log's rules without a store: what an event's entry says, what a listing's filters
// accept, and how a retention pass removes what expired.

const event = (type: string, data: unknown, extra: Partial<DomainEvent> = {}) =>
  ({
    id: 'evt_01J0000000000000000000000A',
    type,
    account_id: 'acc_1',
    created_at: '2026-05-01T12:00:00.000Z',
    data,
    ...extra,
  }) as DomainEvent;

describe("an event's entry", () => {
  it.each([
    ['license.suspended', { license: { id: 'lic_1' } }, { type: 'license', id: 'lic_1' }],
    ['license.activated', { license: { id: 'lic_2' }, activation: { id: 'act_1' } }, { type: 'license', id: 'lic_2' }],
    ['product.updated', { product: { id: 'prd_1' } }, { type: 'product', id: 'prd_1' }],
    ['release.published', { release: { id: 'rel_1' } }, { type: 'release', id: 'rel_1' }],
    ['release.yanked', { release: { id: 'rel_2' } }, { type: 'release', id: 'rel_2' }],
    ['license.batch_completed', { batch: { id: 'lbt_1' } }, { type: 'license_batch', id: 'lbt_1' }],
    ['checkout.completed', { checkout: { id: 'cs_1' } }, { type: 'checkout', id: 'cs_1' }],
    ['subscription.renewed', { subscription: { id: 'sub_1' } }, { type: 'subscription', id: 'sub_1' }],
    ['webhook.disabled', { endpoint: { id: 'we_1', url: 'https://x' } }, { type: 'webhook', id: 'we_1' }],
    ['api_key.revoked', { api_key: { id: 'key_1' } }, { type: 'api_key', id: 'key_1' }],
    ['account.updated', { account: { id: 'acc_1' } }, { type: 'account', id: 'acc_1' }],
    ['customer.erased', { placeholder: 'erased-1@invalid', licenses: 2 }, { type: 'customer', id: 'erased-1@invalid' }],
    ['import.created', { import: { id: 'imp_1', format: 'csv' } }, { type: 'import', id: 'imp_1' }],
    ['export.created', { export: { id: 'exp_1' } }, { type: 'export', id: 'exp_1' }],
    ['product.archived', { product: { id: 'prd_2', name: 'Editor' } }, { type: 'product', id: 'prd_2' }],
    ['product.unarchived', { product: { id: 'prd_2', name: 'Editor' } }, { type: 'product', id: 'prd_2' }],
    ['product.deleted', { product: { id: 'prd_3', name: 'Old' } }, { type: 'product', id: 'prd_3' }],
  ])('of %s is about %j', (type, data, target) => {
    expect(targetOf(event(type, data))).toEqual(target);
  });

  it("comes from every service's events and audit-only actions: each type has the one NATS user that may publish it", () => {
    // A type nobody owns is dropped by every consumer (its subject proves nothing), so it would never be an entry.
    expect([...eventTypes, ...actionTypes].filter((t) => ownerOf(t) === undefined)).toEqual([]);
    expect(ownerOf('import.created')).toBe('license');
    expect(ownerOf('export.created')).toBe('license');
    expect(ownerOf('product.archived')).toBe('product');
    expect(ownerOf('product.deleted')).toBe('product');
    // And an action is the audit log's only: no webhook type shares its name.
    expect(actionTypes.filter((t) => isEventType(t))).toEqual([]);
  });

  it('says who from the origin on the event, else the system; and is the same entry however often it comes', () => {
    const origin = { actor: { type: 'api_key' as const, id: 'key_1' }, ip: '203.0.113.7', user_agent: 'curl' };
    const e = event('license.revoked', { license: { id: 'lic_1' } }, { request_id: 'req_1', origin });
    expect(auditEntryOf(e)).toEqual({
      _id: auditEntryOf(e)._id,
      account_id: 'acc_1',
      at: new Date('2026-05-01T12:00:00.000Z'),
      actor: origin.actor,
      action: 'license.revoked',
      target: { type: 'license', id: 'lic_1' },
      request_id: 'req_1',
      ip: '203.0.113.7',
      user_agent: 'curl',
    });
    const bySystem = auditEntryOf(event('license.expired', { license: { id: 'lic_1' } }));
    expect(bySystem.actor).toEqual(SYSTEM_ACTOR);
    expect(bySystem).not.toHaveProperty('request_id');
    expect(bySystem._id).toBe(auditEntryOf(event('license.expired', { license: { id: 'lic_1' } }))._id);
  });
});

describe("a listing's filters", () => {
  it('turn since and until into id bounds, since inclusive', () => {
    const f = auditFilter({ since: '2026-05-01', until: '2026-05-02T00:00:00Z', action: 'license.revoked' });
    expect(f.action).toBe('license.revoked');
    const at = auditEntryOf(
      event('license.revoked', { license: { id: 'l' } }, { created_at: '2026-05-01T00:00:00.000Z' }),
    );
    expect(f.idFrom! <= at._id && at._id < f.idBefore!).toBe(true);
    expect(auditFilter({})).toEqual({});
  });

  it.each([
    [{ since: 'last week' }, 'since'],
    [{ until: '01/05/2026' }, 'until'],
    [{ since: '2026-05-02', until: '2026-05-01' }, 'until'],
    [{ target_id: 't'.repeat(201) }, 'target_id'],
  ])('refuse %j naming %s', (req, field) => {
    try {
      auditFilter(req);
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).fieldErrors[0].field).toBe(field);
    }
  });
});

describe('a retention pass', () => {
  it('removes in batches until a batch comes back short, bounded by the retention', async () => {
    let left = 2500;
    const bounds: Date[] = [];
    const store = {
      async removeBefore(bound: Date, limit: number) {
        bounds.push(bound);
        const n = Math.min(left, limit);
        left -= n;
        return n;
      },
    };
    const now = new Date('2026-12-01T00:00:00Z');
    expect(await pruneAudit(store, now, 400, 1000)).toBe(2500);
    expect(bounds).toHaveLength(3);
    expect(bounds[0]).toEqual(retentionBound(now, 400));
    expect(retentionBound(now, 400).toISOString()).toBe('2025-10-27T00:00:00.000Z');
  });
});
