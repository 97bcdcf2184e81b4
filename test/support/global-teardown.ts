import { rmSync } from 'node:fs';
import type { FerretDB } from '../../scripts/lib/ferretdb';
import type { StripeMock } from '../../scripts/lib/stripe-mock';
import { stopSharedStacks } from './shared-stack-handles';

export default async function globalTeardown(): Promise<void> {
  // The systems the workers shared first: they use the store and stripe-mock stopped below.
  await stopSharedStacks();
  const mock = (globalThis as Record<string, unknown>).__stripeMock as StripeMock | undefined;
  await mock?.stop();
  const started = (globalThis as Record<string, unknown>).__ferret as { ferret: FerretDB; dataDir: string } | undefined;
  if (!started) return;
  await started.ferret.stop();
  await started.ferret.postgres?.drop();
  rmSync(started.dataDir, { recursive: true, force: true });
}
