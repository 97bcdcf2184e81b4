import { connectMongo } from '@licensing/runtime';
import { stopWithin } from './bounded-stop';

/**
 * Drops a component's database through a connection of the test's own, once the component has stopped:
 * dropping it under a running service waits on the statements its loops hold open, and on a loaded
 * machine that wait outlasted jest's hook limit. A failed drop is left to the run's end, which drops the
 * run's whole store.
 */
export async function dropDatabaseOf(mongoUrl: string, name: string): Promise<void> {
  const conn = await connectMongo(mongoUrl, name);
  try {
    await conn.dropDatabase();
  } catch {
    /* left for the end of the run */
  } finally {
    await conn.close();
  }
}

/** A service a test started: what stopAndDrop needs of it. */
interface StartedService {
  stop(): Promise<unknown>;
  ctx: { db: { name: string } };
}

/**
 * Stops a service a test started (waiting at most STOP_WAIT_MS), then drops its database through a
 * connection of the test's own (dropDatabaseOf). `mongoUrl`: the run's store, as the test topology has it.
 */
export async function stopAndDrop(
  what: string,
  service: StartedService | undefined,
  mongoUrl = process.env.TEST_MONGO_URL ?? '',
): Promise<void> {
  if (!service) return;
  const name = service.ctx.db.name;
  await stopWithin(what, service.stop());
  if (mongoUrl) await dropDatabaseOf(mongoUrl, name);
}
