import { LicenseServiceService, ProductServiceClient } from '@licensing/proto';
import { createClient, type Clock } from '@licensing/runtime';
import { type FakePeer, startFakePeer } from '@licensing/test-support';
import { start } from '../../src/main';
import { credentialOf, envFor, type Topology } from '../../../../scripts/lib/topology';
import { setUpEvents } from '../../../../scripts/lib/events-setup';
import { EventLog } from '../../../../test/support/events';

// The product service alone, as its component tests run it: over real FerretDB and NATS (the event
// stream set up as deployments set it up), called as the gateway calls it, with the stream's events
// read as they arrive. One per test file: started before its tests, stopped with its database after.

export interface RunningProduct {
  service: Awaited<ReturnType<typeof start>>;
  /** The gateway's client (what src/access.ts lets the gateway do). */
  products: ReturnType<typeof createClient<ProductServiceClient>>;
  events: EventLog;
  /** The fake licence service: HasLicenses answers yes for the product ids in `licensed`. */
  licenses: FakePeer<typeof LicenseServiceService>;
  licensed: Set<string>;
}

/**
 * Registers the file's beforeAll and afterAll; the fields are there once beforeAll has run. `clock`:
 * the service's, for a test that moves time (the system's without it).
 */
export function useProductService(t: Topology, clock?: Clock): RunningProduct {
  const run = {} as RunningProduct;
  beforeAll(async () => {
    await setUpEvents(t);
    run.licensed = new Set();
    run.licenses = await startFakePeer(LicenseServiceService, {
      hasLicenses: ({ product_id }) => ({ has_licenses: run.licensed.has(product_id) }),
    });
    run.service = await start({
      env: envFor('product', t, { port: 0, addrs: { license: run.licenses.address } }),
      clock,
    });
    run.products = createClient(ProductServiceClient, `127.0.0.1:${run.service.port}`, credentialOf(t, 'gateway'));
    run.events = await EventLog.open(t.natsUrl, t.stream);
  });
  afterAll(async () => {
    run.products?.close();
    await run.events?.close();
    await run.service?.ctx.db.dropDatabase().catch(() => undefined);
    await run.service?.stop();
    await run.licenses?.stop();
  });
  return run;
}
