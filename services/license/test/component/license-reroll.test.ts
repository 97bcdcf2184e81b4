import { type AppError, newId } from '@licensing/runtime';
import { type DomainEvent, ValidateLicenseRequest } from '@licensing/proto';
import type { EventLog } from '../../../../test/support/events';
import { type RunningLicense, useLicenseService } from './running-license';

// RerollLicense as the licence service decides it, called over gRPC as the gateway calls it (real
// FerretDB and NATS, the service's clock moved by the test): the licence gets a new key and keeps
// everything else; the old key validates (next_action update_key, never showing the new key) until its
// grace ends and is not_found after; license.rerolled says which key was replaced and until when, and
// every later event of the licence names the replaced key among previous_keys, so a cache that
// remembers the old key forgets it with the licence. How the gateways' caches follow that, and the
// REST shapes: gateway/test/component/license-reroll-routes.test.ts; the new key's mail:
// test/system/licence-journey.test.ts.

const HOUR = 3_600_000;
let svc: RunningLicense;
let events: EventLog;
const accountId = newId('acct');
let productId: string;

useLicenseService(async (started, log) => {
  svc = started;
  events = log;
  productId = svc.product(accountId, { duration_days: 365, max_activations: 3, entitlements: ['pdf'] }).id;
});

const issue = () => svc.issue(accountId, productId, 'reroll@example.com');
const read = (key: string) => svc.api.getLicense({ account_id: accountId, key });
const reroll = (key: string, grace_hours: number, send_email = false) =>
  svc.api.rerollLicense({ account_id: accountId, key, grace_hours, send_email });
const validate = (key: string) =>
  svc.api.validateLicense(ValidateLicenseRequest.fromPartial({ account_id: accountId, key, key_scope: 'full' }));
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (err: AppError) => err,
  );
type LicenceEvent = DomainEvent & {
  data: { license: { id: string; key: string; previous_keys?: { key: string }[] }; previous_key?: string };
};
const ofLicence = (type: string, id: string) => (e: DomainEvent) =>
  e.type === type && (e as LicenceEvent).data.license.id === id;

it('gives a new key and keeps the id, activations, entitlements, metadata and expiry; the old key validates with update_key until the grace ends, from the caches', async () => {
  const oldKey = await issue();
  await svc.api.updateLicense({
    account_id: accountId,
    key: oldKey,
    metadata: { order: '42' },
    set_entitlements: true,
    entitlements: ['extra'],
  });
  await svc.activate(accountId, oldKey, 'machine-1');
  const before = await read(oldKey);

  const after = await reroll(oldKey, 2);
  const newKey = after.key;
  expect(newKey).not.toBe(oldKey);
  expect(after.id).toBe(before.id);
  expect(after.expires_at).toBe(before.expires_at);
  expect(after.metadata).toEqual({ order: '42' });
  expect(after.entitlements).toEqual(before.entitlements);
  expect(after.extra_entitlements).toEqual(['extra']);
  expect((await read(newKey)).activations).toBe(1);
  // The old key works only for validating: every other call knows the licence by its new key alone.
  expect((await refusal(read(oldKey))).code).toBe('not_found');

  const rerolled = (await events.waitFor(ofLicence('license.rerolled', before.id))) as LicenceEvent;
  expect(rerolled.data).toMatchObject({ previous_key: oldKey, license: { key: newKey } });
  expect((rerolled.data as { previous_key_valid_until?: string }).previous_key_valid_until).toBe(
    new Date(Date.parse(rerolled.created_at) + 2 * HOUR).toISOString(),
  );
  expect(rerolled.data.license.previous_keys?.map((p) => p.key)).toEqual([oldKey]);

  expect(await validate(newKey)).toMatchObject({ valid: true, code: 'valid', next_action: 'none' });
  for (let i = 0; i < 2; i++) {
    const old = await validate(oldKey);
    expect(old).toMatchObject({ valid: true, code: 'valid', next_action: 'update_key' });
    // The holder of the old key is never shown the new one.
    expect(JSON.stringify(old)).not.toContain(newKey);
    expect(old.license?.key).toBe(oldKey);
  }

  // After the grace: not found.
  svc.clock.advance(2 * HOUR + 1000);
  expect(await validate(oldKey)).toMatchObject({ valid: false, code: 'not_found', license: undefined });
  expect(await validate(newKey)).toMatchObject({ valid: true, code: 'valid' });
});

it('a gateway that cached the old key sees the reroll through its event, and a later revocation of the licence too', async () => {
  const oldKey = await issue();
  const { id } = await read(oldKey);
  const { key: newKey } = await reroll(oldKey, 24);
  // The revocation names the new key, and the replaced one among previous_keys (which a cache evicts with it).
  await svc.api.transitionLicense({ account_id: accountId, key: newKey, action: 'revoke' });
  const revoked = (await events.waitFor(ofLicence('license.revoked', id))) as LicenceEvent;
  expect(revoked.data.license).toMatchObject({ key: newKey, previous_keys: [{ key: oldKey }] });
  expect(await validate(oldKey)).toMatchObject({ valid: false, code: 'revoked' });
  expect(await validate(newKey)).toMatchObject({ valid: false, code: 'revoked' });
});

it('grace_hours 0: the old key is not found at once, and the new key is mailed when asked', async () => {
  const oldKey = await issue();
  expect(await validate(oldKey)).toMatchObject({ valid: true });
  const { id, key: newKey } = await reroll(oldKey, 0, true);
  expect(await validate(oldKey)).toMatchObject({ valid: false, code: 'not_found' });
  expect(await validate(newKey)).toMatchObject({ valid: true, code: 'valid' });
  // The mail is asked on license.rerolled (the notification service queues it from there).
  const rerolled = await events.waitFor(ofLicence('license.rerolled', id));
  expect(rerolled).toMatchObject({ send_email: true, data: { license: { key: newKey } } });
  // A retry with the old key (its answer lost) answers the licence with its new key, and asks no mail twice.
  expect((await reroll(oldKey, 0, true)).key).toBe(newKey);
  await svc.api.transitionLicense({ account_id: accountId, key: newKey, action: 'suspend' }); // a later event
  await events.waitFor(ofLicence('license.suspended', id));
  expect(events.all().filter(ofLicence('license.rerolled', id))).toHaveLength(1);
});

it('refuses a revoked licence, a grace out of range and an unknown key, changing nothing', async () => {
  const key = await issue();
  for (const grace_hours of [721, -1]) {
    const refused = await refusal(reroll(key, grace_hours));
    expect([refused.code, refused.fieldErrors[0]?.field]).toEqual(['invalid_request', 'grace_hours']);
  }
  expect((await read(key)).key).toBe(key);
  await svc.api.transitionLicense({ account_id: accountId, key, action: 'revoke' });
  expect((await refusal(reroll(key, 1))).code).toBe('conflict');
  expect((await read(key)).key).toBe(key);
  expect((await refusal(reroll('7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-AAAAA', 0))).code).toBe('not_found');
});
