import { natsServers } from '@licensing/runtime';

// NATS_URL names one server or every node of a cluster; nats.js never splits a string itself.
it('splits a comma-separated NATS_URL into its servers, and keeps a single one as it is', () => {
  expect(natsServers('nats://127.0.0.1:4222')).toEqual(['nats://127.0.0.1:4222']);
  expect(natsServers('nats://nats-0:4222, nats://nats-1:4222,nats://nats-2:4222,')).toEqual([
    'nats://nats-0:4222',
    'nats://nats-1:4222',
    'nats://nats-2:4222',
  ]);
  expect(() => natsServers(' , ')).toThrow('NATS_URL names no server');
});
