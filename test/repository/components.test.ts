import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { internalCallers, loadConfig, natsUsers } from '@licensing/runtime';
import {
  addrSetting,
  calleesOf,
  componentNames,
  components,
  databaseOf,
  gateway,
  pageUrlSetting,
  parseRegistry,
  services,
  web,
} from '../../scripts/lib/components';
import { entry } from '../../scripts/lib/launch';
import { envFor, pageKey, type Addrs } from '../../scripts/lib/topology';
import { schemas } from '../support/schemas';
import { startOf, testTopology } from '../support/stack';

// components.json is the one list of the components: what cannot read it (the
// runtime package, each component's own files) must agree with it, and this is
// where a new entry learns what it still lacks.

const root = join(__dirname, '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const registryText = read('components.json');

describe('components.json', () => {
  const broken = (change: (list: any[]) => void) => {
    const doc = JSON.parse(registryText);
    change(doc.components);
    return () => parseRegistry(JSON.stringify(doc));
  };

  it('lists the services, then the web component, then the gateway, with unique ports', () => {
    expect(components.map((c) => c.kind)).toEqual([...services.map(() => 'service'), 'web', 'gateway']);
    expect(components[components.length - 1]).toBe(gateway);
    for (const key of ['ports', 'deployPorts'] as const) {
      const all = components.flatMap((c) => Object.values(c[key]));
      expect([key, all.length]).toEqual([key, new Set(all).size]);
    }
  });

  it('no default port lies in the range outgoing connections take (32768–60999), so a restart finds them free', () => {
    // Every port a component listens on by default, from components.json and from the config schemas
    // (ports, and the ports of the default addresses of the services it calls).
    const defaults = components.flatMap((c) => {
      const schema = schemas[c.name] as Record<string, { default?: unknown }>;
      const fromSchema = Object.entries(schema).flatMap(([name, s]) => {
        if (/(^|_)PORT$/.test(name) && typeof s.default === 'number') return [[name, s.default] as const];
        const port = /_GRPC_ADDR$|_PAGE_URL$/.test(name) && /:(\d+)$/.exec(String(s.default ?? ''))?.[1];
        return port ? [[name, Number(port)] as const] : [];
      });
      return [...Object.entries(c.ports), ...fromSchema].map(([what, port]) => `${c.name} ${what} ${port}`);
    });
    expect(defaults.length).toBeGreaterThan(20);
    const ephemeral = defaults.filter((d) => {
      const port = Number(d.split(' ').pop());
      return port >= 32768 && port <= 60999;
    });
    expect(ephemeral).toEqual([]);
  });

  it('is refused, naming the problem, when an entry is inconsistent', () => {
    expect(broken((l) => l.push({ ...l[0] }))).toThrow('account: listed twice');
    expect(broken((l) => (l[1].entry = 'main.js'))).toThrow('entry must be services/product/dist/main.js');
    expect(broken((l) => (l[0].callers = ['gateway', 'stranger']))).toThrow(
      'caller stranger is not in internalCallers',
    );
    expect(broken((l) => (l[0].ports.metrics = 9101))).toThrow('gRPC port + 1000');
    expect(broken((l) => (l[0].ports = { grpc: 50051, metrics: 51051 }))).toThrow(
      'account: default port 50051 must lie from 1024 to 19999',
    );
    expect(broken((l) => l.reverse())).toThrow('the gateway comes last');
    expect(broken((l) => delete l[3].deployPorts)).toThrow('license: ports and deployPorts need metrics');
  });
});

describe.each(components.map((c) => [c.name, c] as const))('%s', (name, c) => {
  it('has a workspace whose package.json points at its entry and its sources', () => {
    const pkg = JSON.parse(read(`${c.folder}/package.json`)) as { main: string; types: string };
    expect(`${c.folder}/${pkg.main}`).toBe(c.entry);
    expect(pkg.types).toBe('src/main.ts');
    expect(existsSync(join(root, c.folder, pkg.types))).toBe(true);
    const workspaces = JSON.parse(read('package.json')).workspaces as string[];
    expect(workspaces.some((w) => w === c.folder || (w.endsWith('/*') && c.folder.startsWith(w.slice(0, -1))))).toBe(
      true,
    );
  });

  it('its config schema defaults to the ports in components.json', () => {
    const schema = schemas[name] as Record<string, { default?: unknown }>;
    const defaults = (names: string[]) => names.map((n) => schema[n]?.default);
    if (c.kind !== 'service') expect(defaults(['PORT', 'METRICS_PORT'])).toEqual([c.ports.http, c.ports.metrics]);
    else {
      expect(defaults(['GRPC_PORT', 'METRICS_PORT', 'MONGO_DB'])).toEqual([
        c.ports.grpc,
        c.ports.metrics,
        databaseOf(name),
      ]);
      expect(schema.HTTP_PORT?.default).toBe(c.ports.http);
    }
  });

  it('its config knows the address of exactly the services it calls (their callers lists), at their default ports', () => {
    const schema = schemas[name] as Record<string, { default?: unknown }>;
    const expected: Record<string, unknown> = Object.fromEntries(
      calleesOf(name).map((s) => [addrSetting(s), `127.0.0.1:${services.find((x) => x.name === s)!.ports.grpc}`]),
    );
    if (c.kind === 'gateway') {
      for (const s of services.filter((x) => x.ports.http !== undefined))
        expected[pageUrlSetting(s.name)] = `http://127.0.0.1:${s.ports.http}`;
      if (web) expected[pageUrlSetting(web.name)] = `http://127.0.0.1:${web.ports.http}`;
    }
    const actual = Object.fromEntries(
      Object.keys(schema)
        .filter((k) => /_GRPC_ADDR$|_PAGE_URL$/.test(k))
        .map((k) => [k, schema[k].default]),
    );
    expect(actual).toEqual(expected);
  });

  it('the topology gives it every setting it requires, and its config accepts them', () => {
    const t = testTopology({ mongoUrl: 'mongodb://127.0.0.1:1' });
    const addrs: Addrs = {};
    for (const s of services) {
      addrs[s.name] = `127.0.0.1:${s.ports.grpc}`;
      if (s.ports.http !== undefined) addrs[pageKey(s.name)] = `http://127.0.0.1:${s.ports.http}`;
    }
    if (web) addrs[pageKey(web.name)] = `http://127.0.0.1:${web.ports.http}`;
    const env = envFor(name, t, { port: 0, httpPort: c.ports.http, addrs, publicBaseUrl: 'http://127.0.0.1:1' });
    expect(() => loadConfig(schemas[name], env)).not.toThrow();
    expect(entry[name]).toBe(c.entry);
  });

  if (c.kind === 'service')
    it('its main exports start (the test stack starts it from there)', () => {
      expect(typeof startOf(c)).toBe('function');
    });

  it('docs/architecture.md describes it', () => {
    expect(read('docs/architecture.md')).toContain(`- **${c.title}**`);
  });
});

describe('what cannot read components.json agrees with it', () => {
  it('the NATS users (packages/runtime/src/events/nats-access.ts) are its components that reach NATS', () => {
    // The web component follows no events and publishes none: it has no NATS settings, and no user.
    expect([...natsUsers]).toEqual(componentNames.filter((name) => 'NATS_URL' in schemas[name]));
  });

  it('the internal callers (packages/runtime/src/grpc/internal-auth.ts) are exactly those its services list', () => {
    expect([...internalCallers].sort()).toEqual([...new Set(services.flatMap((s) => s.callers))].sort());
  });

  it('the build reads it (scripts/build.mjs), and npm run rebuilds when it changes (scripts/run.mjs)', () => {
    expect(read('scripts/build.mjs')).toMatch(/readFileSync\(join\(root, 'components\.json'\)/);
    expect(read('scripts/run.mjs')).toContain("'components.json'");
  });
});
