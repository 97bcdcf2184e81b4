import { CreateLicenseRequest, type DomainEvent } from '@licensing/proto';
import { newId } from '@licensing/runtime';
import type { EventLog } from '../../../../test/support/events';
import { type RunningLicense, useLicenseService } from './running-license';

// The licence mail asked on a create or a reroll (send_email) is asked on the licence's own event,
// license.created / license.rerolled, written with the licence in one write: the notification service's
// durable consumers queue one mail per event (services/notification/test/component/licence-mail-events.test.ts),
// so a retried call must write no second event, and a call without send_email an event that asks nothing.

let svc: RunningLicense;
let events: EventLog;
let account: string;
let product: string;

useLicenseService(async (started, log) => {
  svc = started;
  events = log;
  account = newId('acct');
  product = svc.product(account).id;
});

const create = (email: string, more: Partial<CreateLicenseRequest> = {}) =>
  svc.api.createLicense(
    CreateLicenseRequest.fromPartial({ account_id: account, product_id: product, customer_email: email, ...more }),
  );
const reroll = (key: string, send_email = false) =>
  svc.api.rerollLicense({ account_id: account, key, grace_hours: 0, send_email });

/** The event of this type about this licence (by id), as the stream holds it. */
const eventOf = (type: string, licenseId: string) =>
  events.waitFor((e) => e.type === type && (e.data as any).license.id === licenseId);
const eventsOf = (type: string, licenseId: string): DomainEvent[] =>
  events.all().filter((e) => e.type === type && (e.data as any).license.id === licenseId);

it('a licence created with send_email asks for its mail on license.created', async () => {
  const created = await create('down-create@example.com', { send_email: true });
  const event = await eventOf('license.created', created.id);
  expect(event.send_email).toBe(true);
  expect((event.data as any).license.key).toBe(created.key);
});

it("a reroll with send_email asks for the new key's mail on license.rerolled; a retried reroll answers the same key and asks no second mail", async () => {
  const created = await create('down-reroll@example.com');
  const rerolled = await reroll(created.key, true);
  expect(rerolled.key).not.toBe(created.key);
  const event = await eventOf('license.rerolled', created.id);
  expect(event.send_email).toBe(true);
  expect((event.data as any).license.key).toBe(rerolled.key);
  // A retried reroll (the old key, its answer lost) answers the same key and asks no second mail.
  const again = await reroll(created.key, true);
  expect(again.key).toBe(rerolled.key);
  // A later event of the stream shows the log has caught up past any second license.rerolled.
  const later = await create('after-reroll@example.com');
  await eventOf('license.created', later.id);
  expect(
    events.all().filter((e) => e.type === 'license.rerolled' && (e.data as any).license.key === rerolled.key),
  ).toHaveLength(1);
});

it('without send_email the events ask for nothing', async () => {
  const created = await create('quiet@example.com');
  await reroll(created.key);
  expect((await eventOf('license.created', created.id)).send_email).toBeUndefined();
  expect((await eventOf('license.rerolled', created.id)).send_email).toBeUndefined();
});

it('a create retried with the same Idempotency-Key answers the same licence and writes one event', async () => {
  const body = { send_email: true, idempotency_key: 'mail-events-retry' };
  const first = await create('retry@example.com', body);
  const second = await create('retry@example.com', body);
  expect(second.key).toBe(first.key);
  // The same key with a request that differs (send_email no longer asked) is not the same request.
  const other = await create('retry@example.com', { idempotency_key: 'mail-events-retry' }).catch((e: unknown) => e);
  expect(other).toMatchObject({ code: 'idempotency_key_reused' });
  const later = await create('after-retry@example.com', { send_email: true });
  await eventOf('license.created', later.id);
  expect(eventsOf('license.created', first.id)).toHaveLength(1);
  expect(eventsOf('license.created', first.id)[0].send_email).toBe(true);
});
