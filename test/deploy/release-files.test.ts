import { join } from 'node:path';
import { FileArtifactStore } from '../../gateway/src/artifacts/file-store';
import { artifactStoreOf } from '../../gateway/src/artifacts/store-url';
import { find, overlay, overlays } from './k8s';
import { configFrom, read, yamlOf } from './support';

// Where the deployed gateways keep release files (docs/operations.md, "Release files"): by default on a
// volume at DATA_DIR/artifacts that outlives the container (and, in Kubernetes, is shared by every
// replica), or in the S3 bucket ARTIFACT_STORE_URL names, its key a secret file the AWS SDK reads.

type K8s = Record<string, any>;
const compose = yamlOf('docker-compose.yml');
const gateway = compose.services.gateway;

describe('docker-compose.yml', () => {
  const env = gateway.environment as Record<string, string>;
  // As compose interpolates it with nothing set in the shell.
  const interpolated = Object.fromEntries(
    Object.entries(env).map(([k, v]) => [k, String(v).replace(/\$\{\w+:-([^}]*)\}/g, '$1')]),
  );

  it('keeps release files in a named volume at DATA_DIR/artifacts while ARTIFACT_STORE_URL is empty', () => {
    expect(env.ARTIFACT_STORE_URL).toMatch(/^\$\{ARTIFACT_STORE_URL:-\}$/); // from the shell or .env
    const config = configFrom('gateway', interpolated);
    const store = artifactStoreOf(config.ARTIFACT_STORE_URL as string, config.DATA_DIR as string);
    expect(store).toBeInstanceOf(FileArtifactStore);
    const folder = join(config.DATA_DIR as string, 'artifacts');
    expect(gateway.volumes).toContain(`gateway-artifacts:${folder}`);
    expect(Object.keys(compose.volumes)).toContain('gateway-artifacts');
    // The image makes that folder the node user's, so a new volume mounted on it is writable (read_only root).
    expect(read('deploy/Dockerfile')).toContain(`RUN mkdir -p ${folder} && chown node:node ${folder}`);
  });

  it("gives the S3 store's key only as a secret file, never as a variable", () => {
    expect(env.AWS_SHARED_CREDENTIALS_FILE).toBe('/run/secrets/aws_credentials');
    expect(gateway.secrets).toContain('aws_credentials');
    expect(compose.secrets.aws_credentials).toEqual({ file: './deploy/secrets/aws_credentials' });
    for (const service of Object.values(compose.services) as K8s[])
      expect(Object.keys(service.environment ?? {})).not.toEqual(
        expect.arrayContaining([expect.stringMatching(/^AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN)$/)]),
      );
  });
});

describe.each(overlays)('Kubernetes, %s overlay', (name) => {
  const objs = overlay(name);
  const pod = find(objs, 'Deployment', 'gateway')!.spec.template.spec;
  const env: Record<string, string> = Object.fromEntries(pod.containers[0].env.map((e: K8s) => [e.name, e.value]));

  it('mounts the gateway-artifacts claim at DATA_DIR/artifacts, ARTIFACT_STORE_URL empty', () => {
    expect(env.ARTIFACT_STORE_URL).toBe('');
    const volume = pod.volumes.find((v: K8s) => v.persistentVolumeClaim);
    expect(volume.persistentVolumeClaim).toEqual({ claimName: 'gateway-artifacts' });
    expect(pod.containers[0].volumeMounts).toContainEqual({
      name: volume.name,
      mountPath: `${env.DATA_DIR}/artifacts`,
    });
    const claim = find(objs, 'PersistentVolumeClaim', 'gateway-artifacts')!;
    // Every replica writes the same files: shared (ReadWriteMany) wherever more than one node may run them.
    if (name === 'production') expect(claim.spec.accessModes).toEqual(['ReadWriteMany']);
    expect(claim.spec.resources.requests.storage).toMatch(/^\d+Gi$/);
  });

  it("reads the S3 store's key from the Secret's aws_credentials", () => {
    expect(env.AWS_SHARED_CREDENTIALS_FILE).toBe('/run/secrets/aws_credentials');
    const secrets = pod.volumes.find((v: K8s) => v.name === 'secrets').secret;
    expect(secrets.items).toContainEqual({ key: 'aws_credentials', path: 'aws_credentials' });
    expect(Object.keys(yamlOf('deploy/k8s/secret.example.yaml').stringData)).toContain('aws_credentials');
    expect(Object.keys(env)).not.toContain('AWS_SECRET_ACCESS_KEY');
  });
});
