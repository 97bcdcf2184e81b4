import { credentials } from '@grpc/grpc-js';
import { health } from '@licensing/proto';
import { checkHealth } from '@licensing/runtime';

/** Resolves once the gRPC service at `addr` answers SERVING (it binds its port before its stores are up). */
export async function waitForServing(addr: string, timeoutMs: number, failed?: Promise<never>): Promise<void> {
  const probe = new health.HealthClient(addr, credentials.createInsecure());
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      const check = checkHealth(probe, 1000).then((r) => r.serving);
      if (await (failed ? Promise.race([check, failed]) : check)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${addr} did not report SERVING within ${timeoutMs} ms`);
  } finally {
    probe.close();
  }
}
