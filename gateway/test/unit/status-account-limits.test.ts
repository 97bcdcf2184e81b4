import { accountLimits } from '@licensing/proto';
import { openApiDocument } from '../../src/openapi/document';

// GET /api/v1/status answers accountLimits as it is: the document names every one of its bounds, and
// no other (a bound added to proto/rules/account-limits.ts without its description fails here).

it("the status schema's account_limits are exactly accountLimits", () => {
  const doc = openApiDocument('test') as unknown as {
    components: { schemas: Record<string, { properties: Record<string, { properties?: Record<string, unknown> }> }> };
  };
  const status = Object.values(doc.components.schemas).find((s) => s.properties?.account_limits);
  expect(Object.keys(status!.properties.account_limits.properties ?? {}).sort()).toEqual(
    Object.keys(accountLimits).sort(),
  );
});
