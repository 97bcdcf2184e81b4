import { randomBytes } from 'node:crypto';
import { Keyring } from '@licensing/runtime';
import type { Lookup } from '../../../services/webhook/src/domain/ssrf';
import type { EndpointDeps } from '../../../services/webhook/src/use-cases/deps';
import { FakeClock } from './common';
import { FakeDeliveryStore, FakeEndpointStore } from './webhook-stores';

/** DNS as the tests want it: public names, one that points inside, and none for anything else. */
export const fakeDns: Lookup = async (host) =>
  ({ 'hooks.example.com': ['93.184.216.34'], 'inside.example.com': ['10.0.0.5'] })[host] ?? [];

export function webhookSetup(over: Partial<EndpointDeps> = {}) {
  const endpoints = new FakeEndpointStore();
  const deliveries = new FakeDeliveryStore();
  const clock = new FakeClock();
  const deps: EndpointDeps = {
    endpoints,
    deliveries,
    clock,
    secretKey: Keyring.parse(randomBytes(32).toString('base64'), 'WEBHOOK_SECRET_KEY'),
    urlPolicy: { httpsOnly: true, allowLoopback: false },
    lookup: fakeDns,
    maxEndpoints: 3,
    ...over,
  };
  return { endpoints, deliveries, clock, deps };
}
