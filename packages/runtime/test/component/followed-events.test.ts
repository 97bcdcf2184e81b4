import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection } from 'nats';
import { createLogger, deliverySequenceOf, FollowedEvents, type LostReason } from '@licensing/runtime';
import { NatsDroppingProxy } from '../../../../test/support/nats-dropping-proxy';
import { eventually } from '../../../../test/support/eventually';

// The runtime's follower of eviction events (every cache that outlives a second uses it: the gateway's
// validation cache, the licence service's caches) over the machine's NATS, through a proxy that makes
// its connection lose messages.
const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const id = randomBytes(3).toString('hex');
const stream = `T_FOLLOW_${id}`;
const prefix = `t_follow_${id}`;
let admin: NatsConnection;
let proxy: NatsDroppingProxy;
let nc: NatsConnection;

beforeAll(async () => {
  admin = await connect({ servers: natsUrl });
  await (await admin.jetstreamManager()).streams.add({ name: stream, subjects: [`${prefix}.>`] });
  const { hostname, port } = new URL(natsUrl);
  proxy = await NatsDroppingProxy.start({ host: hostname, port: Number(port) });
  nc = await connect({ servers: proxy.url });
});

afterAll(async () => {
  await nc?.close();
  await proxy?.stop();
  await (await admin.jetstreamManager()).streams.delete(stream).catch(() => undefined);
  await admin?.close();
});

function follow() {
  const heard: string[] = [];
  const lost: LostReason[] = [];
  const changes: boolean[] = [];
  const following = new FollowedEvents({
    nc,
    jsm: () => nc.jetstreamManager({ timeout: 2000 }),
    stream,
    subjects: [`${prefix}.license.>`],
    name: 'test',
    log: createLogger('test', 'silent'),
    onMessage: (subject, data) => heard.push(`${subject} ${new TextDecoder().decode(data)}`),
    onLost: (reason) => lost.push(reason),
  });
  following.onStatus((c) => changes.push(c));
  return { following, heard, lost, changes };
}

const publish = (type: string, body: string) => admin.jetstream().publish(`${prefix}.${type}`, body);

it('delivers the followed events in order, and nothing else', async () => {
  const { following, heard } = follow();
  try {
    await eventually(() => expect(following.connected).toBe(true));
    await publish('license.revoked', 'a');
    await publish('product.updated', 'b');
    await publish('license.created', 'c');
    await eventually(() => expect(heard).toEqual([`${prefix}.license.revoked a`, `${prefix}.license.created c`]));
    expect(following.connected).toBe(true);
  } finally {
    following.close();
  }
});

it('a lost message is a gap: not connected at once (listeners told), then following again from then on', async () => {
  const { following, heard, lost, changes } = follow();
  try {
    await eventually(() => expect(following.connected).toBe(true));
    proxy.drop((subject) => subject === `${prefix}.license.suspended`);
    await publish('license.suspended', 'lost');
    await eventually(() => expect(lost).toEqual(['gap'])); // the next heartbeat says one more was sent
    proxy.heal();
    await eventually(() => expect(following.connected).toBe(true));
    expect(changes).toEqual([true, false, true]);
    await publish('license.revoked', 'after');
    await eventually(() => expect(heard).toEqual([`${prefix}.license.revoked after`]));
  } finally {
    proxy.heal();
    following.close();
  }
});

it('silence (not even heartbeats) is not trusted either, and a new consumer follows once it is over', async () => {
  const { following, lost } = follow();
  try {
    await eventually(() => expect(following.connected).toBe(true));
    proxy.drop(() => true);
    await eventually(() => expect(lost).toEqual(['silence']));
    expect(following.connected).toBe(false);
    proxy.heal();
    await eventually(() => expect(following.connected).toBe(true), { timeoutMs: 10_000 });
  } finally {
    proxy.heal();
    following.close();
  }
});

it('reads the delivery number of both reply-subject forms', () => {
  expect(deliverySequenceOf('$JS.ACK.S.c1.1.40.7.1795623637569600257.0')).toBe(7);
  expect(deliverySequenceOf('$JS.ACK._.ABC.S.c1.1.40.7.1795623637569600257.0.xyz')).toBe(7);
  expect(deliverySequenceOf('_INBOX.abc')).toBeNaN();
});
