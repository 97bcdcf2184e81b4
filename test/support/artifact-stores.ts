import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startS3Server } from '../../scripts/lib/seaweedfs';
import type { Topology } from '../../scripts/lib/topology';

// The two places release files live, for tests that run once over each: the gateway's own folder
// (DATA_DIR/artifacts, the default) and a real S3-compatible server (SeaweedFS, started here).

export interface ArtifactStoreUnderTest {
  kind: 'file' | 's3';
  /** What a stack over this store is started with. */
  topology: Partial<Topology>;
  stop(): Promise<void>;
}

/**
 * Both stores. The S3 one's credentials go to the process environment, where the gateway's AWS SDK
 * (in this process, as the test stacks run it) finds them; they are put back on stop().
 */
export async function startArtifactStores(): Promise<ArtifactStoreUnderTest[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'licensing-test-s3-'));
  const server = await startS3Server({ dataDir, bucket: 'releases' });
  const before = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
  process.env.AWS_ACCESS_KEY_ID = server.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = server.secretAccessKey;
  const restore = (name: string, value: string | undefined) => {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  };
  return [
    { kind: 'file', topology: {}, stop: async () => undefined },
    {
      kind: 's3',
      topology: { artifactStoreUrl: server.url },
      async stop() {
        restore('AWS_ACCESS_KEY_ID', before.id);
        restore('AWS_SECRET_ACCESS_KEY', before.secret);
        await server.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    },
  ];
}
