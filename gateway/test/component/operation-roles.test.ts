import { MEMBER_ROLES, roleCovers, type OperationRole } from '@licensing/proto';
import { openApiDocument } from '../../src/openapi/document';
import { accountHandlers, fakeVendor, productHandlers } from './fake-service-answers';
import { fakeLicenceService } from './fake-licence-service';
import { startGatewayWithFakeServices, type GatewayWithFakeServices } from './gateway-with-fake-services';

// Every operation of the OpenAPI document against an API key of every role below owner (an admin key
// is what every full key made before roles is): a key whose role is below the operation's
// x-required-role is refused with 403 forbidden naming both roles, before anything is read or
// called; a key whose role covers it is never refused for its role. The roles themselves:
// proto/rules/roles.ts (proto/test/unit/roles.test.ts).

const KEY_ROLES = MEMBER_ROLES.filter((r) => r !== 'owner');
const vendor = fakeVendor('enterprise');
vendor.roleKeys = Object.fromEntries(KEY_ROLES.map((role) => [`lk_full_${role}_${vendor.account.id}`, role]));
const keyOf = (role: string) => Object.entries(vendor.roleKeys!).find(([, r]) => r === role)![0];
let h: GatewayWithFakeServices;

beforeAll(async () => {
  const products = [] as Parameters<typeof productHandlers>[0];
  h = await startGatewayWithFakeServices({
    handlers: {
      account: accountHandlers([vendor]),
      product: productHandlers(products),
      license: fakeLicenceService(products).handlers,
    },
  });
});

afterAll(async () => {
  await h?.stop();
});

const operations = Object.entries(openApiDocument('test').paths)
  .filter(([path]) => path.startsWith('/api/v1/'))
  .flatMap(([path, ops]) =>
    Object.entries(ops as Record<string, { 'x-required-role'?: OperationRole }>).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      role: op['x-required-role']!,
    })),
  );

/** The operation's path with its parameters filled in (ids that exist nowhere: a covered role may get 404). */
const concrete = (path: string) => path.replace(/\{(\w+)\}/g, (_, name) => `${name}_0000`);

it('the document names a role for every operation', () => {
  expect(operations.length).toBeGreaterThan(40);
  expect(operations.filter((o) => !o.role)).toEqual([]);
});

it.each(KEY_ROLES)(
  'a %s key is refused (403 forbidden) exactly the operations that need a role above it',
  async (role) => {
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (const op of operations) {
      const res = await fetch(`${h.url}${concrete(op.path)}`, {
        method: op.method,
        headers: {
          authorization: `Bearer ${keyOf(role)}`,
          ...(op.method === 'POST' || op.method === 'PATCH' ? { 'content-type': 'application/json' } : {}),
        },
        body: op.method === 'POST' || op.method === 'PATCH' ? '{}' : undefined,
      });
      const body = (await res.json().catch(() => ({}))) as { code?: string; detail?: string };
      const refused = res.status === 403 && body.code === 'forbidden';
      outcomes.push(`${op.method} ${op.path}: ${refused ? `refused: ${body.detail}` : 'not refused for its role'}`);
      expected.push(
        `${op.method} ${op.path}: ${
          roleCovers(role, op.role)
            ? 'not refused for its role'
            : `refused: this API key's role (${role}) cannot call ${op.method} ${op.path.replace(/\{(\w+)\}/g, ':$1')}: it needs the role ${op.role} or above`
        }`,
      );
    }
    expect(outcomes).toEqual(expected);
  },
);
