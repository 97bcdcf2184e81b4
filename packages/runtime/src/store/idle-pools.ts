/**
 * The MongoDB driver (7.8) wakes every connection pool every 100 ms (minPoolSizeCheckFrequencyMS, which no
 * client option sets) to top the pool up to minPoolSize and drop perished connections. These services keep
 * minPoolSize at 0, so each wake-up only walks the idle connections and arms the next: measured with perf,
 * most of an idle service's CPU, in every process, all day. With minPoolSize 0 the check is skipped; the
 * driver still drops a perished connection when it is next checked out (processWaitQueue), so nothing
 * stale is ever used. A pool with a minimum keeps the driver's own behaviour. If the driver changes the
 * method (an upgrade), nothing is patched and it behaves as shipped: packages/runtime/test/component/idle-pools.test.ts
 * says so.
 */
interface Pool {
  options: { minPoolSize: number };
  ensureMinPoolSize(): void;
}

let patched = false;

/** True once the driver's pools skip the 100 ms check when they have no minimum to keep. */
export function quietIdlePools(): boolean {
  if (patched) return true;
  let proto: Pool | undefined;
  try {
    proto = (require('mongodb/lib/cmap/connection_pool') as { ConnectionPool?: { prototype: Pool } }).ConnectionPool
      ?.prototype;
  } catch {
    return false;
  }
  const original = proto?.ensureMinPoolSize;
  if (!proto || typeof original !== 'function') return false;
  proto.ensureMinPoolSize = function (this: Pool) {
    if (this.options.minPoolSize > 0) original.call(this);
  };
  patched = true;
  return true;
}
