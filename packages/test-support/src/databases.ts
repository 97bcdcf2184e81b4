import { connectMongo } from '@licensing/runtime';

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
