import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { METRIC_HELP } from '@licensing/runtime';
import { withGeneratedSections } from '../../scripts/lib/settings-doc';
import { schemas } from '../support/schemas';

const doc = readFileSync(join(__dirname, '../../docs/operations.md'), 'utf8');

it('docs/operations.md lists every component, setting and metric as the code defines them (run `npm run docs` after changing components.json or a schema)', () => {
  expect(doc).toBe(withGeneratedSections(doc, schemas));
});

it('every setting of every component and every metric name appears in it', () => {
  for (const schema of Object.values(schemas))
    for (const name of Object.keys(schema)) expect(doc).toContain(`\`${name}\``);
  for (const name of Object.keys(METRIC_HELP)) expect(doc).toContain(`\`${name}\``);
  expect(doc).toContain('`INTERNAL_CALLERS` | **required**, secret (or `INTERNAL_CALLERS_FILE`)');
  expect(doc).toContain('`INTERNAL_TOKEN` | (empty), secret (or `INTERNAL_TOKEN_FILE`)');
  // Connection URLs may hold passwords: secrets, given as files in production.
  expect(doc).toContain('`MONGO_URL` | `mongodb://127.0.0.1:27017`, secret (or `MONGO_URL_FILE`)');
  expect(doc).toContain('`REDIS_URL` | `redis://127.0.0.1:6379`, secret (or `REDIS_URL_FILE`)');
  expect(doc).not.toMatch(/:\/\/[^\s/@`]+:[^\s/@`<]+@/); // no URL with a password anywhere
});
