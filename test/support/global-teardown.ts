import { rmSync } from 'node:fs';
import type { FerretDB } from '../../scripts/lib/ferretdb';

export default async function globalTeardown(): Promise<void> {
  const started = (globalThis as Record<string, unknown>).__ferret as { ferret: FerretDB; dataDir: string } | undefined;
  if (!started) return;
  await started.ferret.stop();
  rmSync(started.dataDir, { recursive: true, force: true });
}
