import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connectMongo, MIGRATIONS_COLLECTION } from '@licensing/runtime';
import { client, startStack, type Stack } from '../support/stack';
import { envFor } from '../../scripts/lib/topology';
import { services, type Component } from '../../scripts/lib/components';

// An upgrade in place (docs/operations.md, "Upgrades"): the stores hold the previous release's
// shape (no schema_version, API keys without pepper_id, no migration recorded), and the migrations
// run while the services serve: three Jobs (the operator CLI) at once per service and replicas
// starting. Licences validate and the old API key works throughout; each migration runs once.
// Own stack: it strips the stores back to the previous release's shape and runs the migrations over them.
const exec = promisify(execFile);
const root = join(__dirname, '..', '..');
let stack: Stack;
jest.setTimeout(240_000);

beforeAll(async () => {
  if (!existsSync(join(root, 'scripts', 'dist', 'admin.js')))
    await exec(process.execPath, [join(root, 'scripts', 'build.mjs')]);
  // No validation cache: every validation below reaches the licence service and its store.
  stack = await startStack({}, { VALIDATION_CACHE_SIZE: '0' });
});

afterAll(async () => {
  await stack?.stop();
});

async function job(command: string, service: Component) {
  const env = {
    PATH: process.env.PATH,
    ...envFor(service, stack.topology, { port: 0, httpPort: 0, addrs: stack.addrs }),
  };
  const { stdout } = await exec(
    process.execPath,
    [join(root, 'scripts', 'dist', 'admin.js'), command, '--service', service],
    {
      env,
    },
  );
  return JSON.parse(stdout);
}

it('migrates the previous schema with the services running, each migration once, validating throughout', async () => {
  const { accountId, apiKey } = await stack.newAccount();
  await stack.admin.updateAccount({ id: accountId, per_minute_limit: 100_000, per_hour_limit: 1_000_000 });
  const api = client(stack.url, apiKey);
  const productId = (await api('POST', '/api/v1/products', { name: 'Old shape' })).body.id;
  const keys: string[] = [];
  for (let i = 0; i < 5; i++)
    keys.push(
      (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: `u${i}@example.com` })).body
        .license_key,
    );
  expect((await api('POST', `/api/v1/licenses/${keys[0]}/file`, {})).status).toBe(201);

  // The previous release's store: no versions, no pepper ids, nothing recorded.
  const dbs = Object.fromEntries(
    await Promise.all(
      services.map(
        async (s) =>
          [s.name, await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_${s.name}`)] as const,
      ),
    ),
  );
  try {
    for (const db of Object.values(dbs)) {
      await db.collection(MIGRATIONS_COLLECTION).deleteMany({});
      for (const c of await db.db!.listCollections({}, { nameOnly: true }).toArray())
        if (c.name !== MIGRATIONS_COLLECTION)
          await db.collection(c.name).updateMany({}, { $unset: { schema_version: '' } });
    }
    await dbs.account.collection('api_keys').updateMany({}, { $unset: { pepper_id: '' } });
    expect(await dbs.license.collection('licenses').countDocuments({ schema_version: { $exists: true } })).toBe(0);

    // Validations and API calls run all along.
    const failures: string[] = [];
    let rounds = 0;
    let stop = false;
    const traffic = (async () => {
      while (!stop) {
        for (const key of keys) {
          const t0 = Date.now();
          const r = await api('POST', '/api/v1/keys/validate', { key });
          if (r.status !== 200 || r.body.valid !== true)
            failures.push(`${key}: ${r.status} after ${Date.now() - t0} ms ${JSON.stringify(r.body)}`);
        }
        const p = await api('GET', `/api/v1/products/${productId}`);
        if (p.status !== 200) failures.push(`product: ${p.status}`);
        rounds++;
      }
    })();

    // Three Jobs at once for the licence service, which answers the validations, while a second replica
    // of it starts; then the account service's Jobs (two at once) and one for each other service. One
    // at a time beyond that: the test machine has two cores, and this process runs the whole system.
    let runs: Record<string, unknown>[] = [];
    try {
      const [, ...licenseRuns] = await Promise.all([
        stack.extraService('license'),
        job('migrate', 'license'),
        job('migrate', 'license'),
        job('migrate', 'license'),
      ]);
      runs = [...licenseRuns, ...(await Promise.all([job('migrate', 'account'), job('migrate', 'account')]))];
      for (const s of services) if (!['license', 'account'].includes(s.name)) runs.push(await job('migrate', s.name));
    } finally {
      stop = true;
      await traffic;
    }
    expect(failures).toEqual([]);
    expect(rounds).toBeGreaterThan(0);

    // Each service's own migrations after the shared one.
    const ownMigrations: Record<string, string[]> = {
      account: ['0002-api-key-pepper-id', '0003-api-key-slots', '0004-owner-members'],
      checkout: ['0002-stripe-pending-expiry'],
    };
    for (const s of services) {
      const mine = runs.filter((r) => r.service === s.name) as { applied: string[]; recorded: string[] }[];
      const expected = ['0001-schema-version', ...(ownMigrations[s.name] ?? [])];
      // Each migration applied once: by one of the Jobs, or (the licence service) by the replica starting beside them.
      const applied = mine.flatMap((r) => r.applied).sort();
      if (s.name === 'license') expect(new Set(applied).size).toBe(applied.length);
      else expect(applied).toEqual(expected);
      for (const r of mine) expect(r.recorded).toEqual(expected);
      expect((await job('migrations', s.name)).migrations).toEqual(expected.map((id) => ({ id, applied: true })));
      // Every stored document carries its version now.
      const db = dbs[s.name];
      for (const c of await db.db!.listCollections({}, { nameOnly: true }).toArray()) {
        if (c.name === MIGRATIONS_COLLECTION) continue;
        expect([c.name, await db.collection(c.name).countDocuments({ schema_version: { $exists: false } })]).toEqual([
          c.name,
          0,
        ]);
      }
    }
    expect(
      await dbs.account.collection('api_keys').countDocuments({ account_id: accountId, pepper_id: 'legacy' }),
    ).toBe(1);
    // After the upgrade: the old key, the licences and a new licence (written in the new shape).
    expect((await api('POST', '/api/v1/keys/validate', { key: keys[4] })).body.valid).toBe(true);
    const fresh = (await api('POST', '/api/v1/licenses', { product_id: productId, customer_email: 'new@example.com' }))
      .body;
    expect((await dbs.license.collection('licenses').findOne({ key: fresh.license_key }))?.schema_version).toBe(1);
    expect((await api('POST', `/api/v1/licenses/${keys[0]}/file`, {})).status).toBe(201);
  } finally {
    for (const db of Object.values(dbs)) await db.close();
  }
});
