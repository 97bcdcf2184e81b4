import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { operationRoles } from '../../src/routes/operation-roles';

// docs/api.md's table of roles per operation says what the gateway enforces (its route tables).

it("docs/api.md's Roles table lists every operation with the role its route needs", () => {
  const doc = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'api.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Roles'), doc.indexOf('## Rate limits'));
  const listed = Object.fromEntries(
    [...section.matchAll(/^\| `([A-Z]+ \/api\/v1\/[^`]+)` \| (\w+) \|$/gm)].map((m) => [m[1], m[2]]),
  );
  expect(listed).toEqual(Object.fromEntries(operationRoles()));
});
