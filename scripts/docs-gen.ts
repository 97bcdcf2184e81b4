// `npm run docs`: regenerates the components, settings and metrics tables in
// docs/operations.md, deploy/nats/nats.conf (users and permissions of the NATS server) and the
// ConfigMap that carries it, with deploy/nats/start.sh, to the Kubernetes NATS cluster.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './lib/paths';
import { deployNatsConfig, deployNatsConfigMap, NATS_CONFIG_MAP_FILE } from './lib/deploy-nats';
import { withGeneratedSections, type Schemas } from './lib/settings-doc';
import { components, schemaExport } from './lib/components';

const root = repoRoot();
// The built schemas (npm run docs builds first); the test reads the sources.
const schemas: Schemas = Object.fromEntries(
  components.map((c) => [c.name, (require(join(root, c.folder, 'dist', 'config.js')) as Schemas)[schemaExport(c)]]),
);
const file = join(root, 'docs', 'operations.md');
const before = readFileSync(file, 'utf8');
const after = withGeneratedSections(before, schemas);
if (after !== before) writeFileSync(file, after);
console.log(after === before ? 'docs/operations.md is up to date' : 'docs/operations.md updated');

// The NATS configuration the deployments use, from the same permission table as the tests.
const natsFile = join(root, 'deploy', 'nats', 'nats.conf');
const nats = deployNatsConfig();
const natsBefore = existsSync(natsFile) ? readFileSync(natsFile, 'utf8') : '';
if (nats !== natsBefore) writeFileSync(natsFile, nats);
console.log(nats === natsBefore ? 'deploy/nats/nats.conf is up to date' : 'deploy/nats/nats.conf updated');

// The same two files as the ConfigMap of the Kubernetes NATS cluster (deploy/k8s/components/nats).
const mapFile = join(root, NATS_CONFIG_MAP_FILE);
const map = deployNatsConfigMap({
  'nats.conf': nats,
  'start.sh': readFileSync(join(root, 'deploy', 'nats', 'start.sh'), 'utf8'),
});
const mapBefore = existsSync(mapFile) ? readFileSync(mapFile, 'utf8') : '';
if (map !== mapBefore) writeFileSync(mapFile, map);
console.log(map === mapBefore ? `${NATS_CONFIG_MAP_FILE} is up to date` : `${NATS_CONFIG_MAP_FILE} updated`);
