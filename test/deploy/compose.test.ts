import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { eventsSetupSchema, loadConfig, sealingKey } from '@licensing/runtime';
import { checkTransportConfig } from '../../gateway/src/http/transport';
import { corsPolicyOf } from '../../gateway/src/auth/cors';
import type { GatewayConfig } from '../../gateway/src/config';
import {
  paymentModeProblems,
  paymentsNotConfigured,
  type PaymentModeSettings,
} from '../../services/checkout/src/domain/modes';
import {
  optionalSecret,
  componentOf,
  components,
  configFrom,
  grpcAddresses,
  natsComponents,
  pageAddresses,
  read,
  requiredSettings,
  root,
  secretSettings,
  target,
  yamlOf,
  type Component,
} from './support';

// docker-compose.yml cannot run here (no Docker engine), so it is checked the
// way a careful reviewer would: every component gets every setting its config
// schema requires, secrets come from files, addresses and ports agree, and
// everything waits for the health of what it needs.

const compose = yamlOf('docker-compose.yml');
const services = compose.services as Record<string, any>;
const interpolate = (v: unknown) => String(v).replace(/\$\{(\w+):-([^}]*)\}/g, (_m, _name, dflt) => dflt);
const envOf = (name: string): Record<string, string> =>
  Object.fromEntries(Object.entries(services[name].environment ?? {}).map(([k, v]) => [k, interpolate(v)]));
// Only the components compose has: a missing one fails the first test below by name, not the whole file.
const configs = Object.fromEntries(
  components.filter((c) => services[c]).map((c) => [c, configFrom(c, envOf(c))]),
) as Record<Component, Record<string, any>>;
const grpcPort = (c: Component) => configs[c].GRPC_PORT as number;

// The secrets as deploy/make-secrets.sh makes them, in a scratch copy: the
// checks below read them where compose would mount them.
const made = mkdtempSync(join(tmpdir(), 'licensing-secrets-'));
beforeAll(() => {
  copyFileSync(join(root, 'deploy/make-secrets.sh'), join(made, 'make-secrets.sh'));
  execFileSync('sh', [join(made, 'make-secrets.sh'), 'licensing.test'], { stdio: 'ignore' });
});
afterAll(() => rmSync(made, { recursive: true, force: true }));

/** Where a path under /run/secrets/ comes from on the host (compose's top-level secrets), in the scratch copy. */
const mounted = (path: string) =>
  join(made, (compose.secrets[path.replace('/run/secrets/', '')].file as string).replace('./deploy/', ''));

describe('docker-compose.yml', () => {
  it('runs MongoDB (the official image), NATS with JetStream on a volume, and Redis', () => {
    expect(services.mongodb.image).toMatch(/^mongo:\d/);
    expect(services.nats.command).toEqual(expect.arrayContaining(['-js', '-sd', '/data']));
    expect(services.nats.volumes).toEqual(expect.arrayContaining([expect.stringMatching(/^nats-data:\/data$/)]));
    expect(services.redis.image).toMatch(/^redis:/);
    expect(Object.keys(compose.volumes)).toEqual(expect.arrayContaining(['mongo-data', 'nats-data']));
  });

  it('has a service for every component in components.json, and none other but the stores, the set-up step and the operator CLI', () => {
    const fromImage = Object.keys(services).filter((s) => services[s].image?.startsWith('licensing:'));
    expect(fromImage.filter((s) => s !== 'events-setup' && s !== 'admin')).toEqual(components);
    expect(Object.keys(services).filter((s) => !fromImage.includes(s))).toEqual(['mongodb', 'nats', 'redis']);
  });

  it('comes up without Stripe keys: with make-secrets.sh placeholders, checkout runs without payments (no refusal to start)', () => {
    // The checkout settings compose gives, with the Stripe secrets read from the files make-secrets.sh wrote.
    const env = envOf('checkout');
    const settings = {
      ...configs.checkout,
      STRIPE_SECRET_KEY: readFileSync(mounted(env.STRIPE_SECRET_KEY_FILE), 'utf8').trim(),
      STRIPE_WEBHOOK_SECRET: readFileSync(mounted(env.STRIPE_WEBHOOK_SECRET_FILE), 'utf8').trim(),
    } as unknown as PaymentModeSettings;
    expect(settings.PAYMENT_PROVIDER).toBe('stripe');
    expect(paymentModeProblems(settings)).toEqual([]);
    expect(paymentsNotConfigured(settings)).toBe(true);
    // And the gateway does not wait on anything that could wait forever: it needs checkout healthy, which it is.
    expect(services.gateway.depends_on.checkout).toEqual({ condition: 'service_healthy' });
  });

  it('builds the image on a maintained Node LTS (Node 20 reached its end of life in April 2026)', () => {
    const image = read('deploy/Dockerfile').match(/^ARG NODE_IMAGE=node:(\d+)-bookworm-slim$/m);
    expect(image).not.toBeNull();
    const major = Number(image![1]);
    expect(major % 2).toBe(0); // even majors become LTS
    expect(major).toBeGreaterThanOrEqual(24); // 22 ends in April 2027, 20 has ended
    expect(read('docs/operations.md')).toContain(`node:${major}-bookworm-slim`);
  });

  it('runs the operator CLI from the image on demand: docker compose run --rm admin create-account …', () => {
    const admin = services.admin;
    expect(admin.image).toBe('licensing:latest');
    expect(admin.profiles).toEqual(['tools']); // never started by `up`
    // The arguments of `docker compose run admin <command> …` replace `command`, so the CLI is the entry point.
    expect(admin.entrypoint).toEqual(['node', '--enable-source-maps', 'scripts/dist/admin.js']);
    expect(existsSync(join(root, 'scripts/admin.ts'))).toBe(true);
    const dockerfile = read('deploy/Dockerfile');
    expect(dockerfile).toMatch(/COPY --from=build \/app\/scripts\/dist\/admin\.js scripts\/dist\//);
    // Everything admin.js requires of the scripts folder is in the image too.
    const requires = [...read('scripts/admin.ts').matchAll(/from '\.\/(lib\/[\w-]+)'/g)].map((m) => m[1]);
    expect(requires.length).toBeGreaterThan(0);
    for (const lib of requires) expect(dockerfile).toContain(`/app/scripts/dist/${lib}.js`);
    // It reaches the account service on its gRPC port, inside, as the operator, with the token make-secrets.sh made.
    expect(admin.networks).toEqual(['internal']);
    expect(admin.depends_on).toEqual({ account: { condition: 'service_healthy' } });
    const env = envOf('admin');
    expect(env.ACCOUNT_GRPC_ADDR).toBe(`account:${grpcPort('account')}`);
    expect(env.INTERNAL_TOKEN_FILE).toBe('/run/secrets/internal_token_operator');
    expect(admin.secrets).toEqual(['internal_token_operator', 'internal_token_operator_alt']);
    expect(readFileSync(mounted(env.INTERNAL_TOKEN_FILE), 'utf8').trim()).toMatch(/^\S{20,}$/);
    // The account service believes that token: its digest is among the account service's callers.
    const callers = readFileSync(mounted(envOf('account').INTERNAL_CALLERS_FILE), 'utf8');
    expect(callers).toMatch(/operator/);
  });

  it('sets up the event stream once NATS is healthy, as the NATS set-up user, before any component starts', () => {
    const setup = services['events-setup'];
    expect(setup.image).toBe('licensing:latest');
    expect(setup.command).toEqual(['node', 'packages/runtime/dist/events/events-setup.js']);
    expect(existsSync(join(root, 'packages/runtime/src/events/events-setup.ts'))).toBe(true);
    expect(setup.restart).toBe('on-failure');
    expect(setup.depends_on).toEqual({ nats: { condition: 'service_healthy' } });
    const env = envOf('events-setup');
    expect(env).toMatchObject({ NATS_USER: 'setup', NATS_PASSWORD_FILE: '/run/secrets/nats_password_setup' });
    expect(setup.secrets).toEqual(['nats_password_setup', 'nats_password_setup_alt']);
    const config = loadConfig(eventsSetupSchema, { ...env, NATS_PASSWORD: 'value-of-NATS_PASSWORD' });
    // The same NATS, stream and subjects as the components that reach NATS.
    for (const c of natsComponents) {
      expect([c, config.NATS_URL]).toEqual([c, configs[c].NATS_URL]);
      expect([c, config.EVENTS_STREAM, config.EVENTS_SUBJECT_PREFIX]).toEqual([
        c,
        configs[c].EVENTS_STREAM,
        configs[c].EVENTS_SUBJECT_PREFIX,
      ]);
      expect([c, services[c].depends_on['events-setup']]).toEqual([c, { condition: 'service_completed_successfully' }]);
    }
  });

  it.each(components)('%s: built from deploy/Dockerfile, runs its own entry point, read-only', (c) => {
    const s = services[c];
    const { entry, folder } = componentOf(c);
    expect(s.build).toEqual({ context: '.', dockerfile: 'deploy/Dockerfile' });
    expect(s.image).toBe(`licensing:latest`);
    expect(s.command.slice(-1)[0]).toBe(entry);
    expect(existsSync(join(root, folder, 'src/main.ts'))).toBe(true);
    expect(s.read_only).toBe(true);
  });

  it.each(components)('%s: listens on its ports in components.json (deployPorts)', (c) => {
    const { kind, deployPorts } = componentOf(c);
    const config = configs[c];
    if (kind === 'gateway') {
      // Compose's gateway terminates TLS itself, on the HTTPS port.
      expect([c, config.PORT, config.METRICS_PORT]).toEqual([c, deployPorts.https, deployPorts.metrics]);
    } else if (kind === 'web') {
      expect([c, config.PORT, config.METRICS_PORT]).toEqual([c, deployPorts.http, deployPorts.metrics]);
    } else {
      expect([c, config.GRPC_PORT, config.METRICS_PORT]).toEqual([c, deployPorts.grpc, deployPorts.metrics]);
      if (deployPorts.http !== undefined) expect([c, config.HTTP_PORT]).toEqual([c, deployPorts.http]);
    }
  });

  it.each(components)('%s: every required setting is given, secrets only as files', (c) => {
    const env = envOf(c);
    for (const name of requiredSettings(c))
      expect([name, `${name}:`, env[name] ?? env[`${name}_FILE`]]).not.toContain(undefined);
    for (const name of secretSettings(c)) {
      expect(env[name]).toBeUndefined(); // never a literal secret in the file
      if (optionalSecret(c, name) && !env[`${name}_FILE`]) continue;
      const file = env[`${name}_FILE`];
      expect(file).toMatch(/^\/run\/secrets\//);
      const secret = file.replace('/run/secrets/', '');
      expect(services[c].secrets).toContain(secret);
      expect(compose.secrets[secret].file).toMatch(/^\.\/deploy\/secrets\//);
    }
    expect(configs[c].NODE_ENV).toBe('production');
  });

  it('secrets are git-ignored, and deploy/make-secrets.sh creates every one in a form the services accept', () => {
    expect(read('.gitignore')).toContain('deploy/secrets/');
    const file = (name: string) => readFileSync(join(made, 'secrets', name), 'utf8').trim();
    // Every secret is made; only the optional mail URL may be empty (dashboard sign-up closed).
    for (const s of Object.values(compose.secrets as Record<string, { file: string }>)) {
      const name = s.file.split('/').pop()!;
      // The second slots of NATS passwords and internal tokens start empty: closed until a rotation fills one.
      if (name === 'mail_url' || name.endsWith('_alt')) expect(file(name)).toBe('');
      else expect(file(name).length).toBeGreaterThan(30);
    }
    expect(() => sealingKey(file('signing_key_secret'), 'SIGNING_KEY_SECRET')).not.toThrow();
    expect(() => sealingKey(file('webhook_secret_key'), 'WEBHOOK_SECRET_KEY')).not.toThrow();
    expect(() => createSecureContext({ cert: file('tls.crt'), key: file('tls.key') })).not.toThrow();
    expect(statSync(join(made, 'secrets')).mode & 0o077).toBe(0); // closed to other users of the host
  });

  it('services listen on all interfaces inside their containers; addresses name a compose service and its port', () => {
    const isService = (c: Component) => componentOf(c).kind === 'service';
    for (const c of components.filter(isService)) expect(configs[c].GRPC_HOST).toBe('0.0.0.0');
    for (const c of components.filter((x) => !isService(x))) expect([c, configs[c].HOST]).toEqual([c, '0.0.0.0']);
    for (const c of components.filter((x) => componentOf(x).ports.http !== undefined && isService(x)))
      expect([c, configs[c].HTTP_HOST]).toEqual([c, '0.0.0.0']);
    for (const [from, setting, to] of grpcAddresses)
      expect([from, setting, target(configs[from][setting])]).toEqual([
        from,
        setting,
        { host: to, port: grpcPort(to) },
      ]);
    for (const [from, setting, to] of pageAddresses)
      expect([from, setting, target(configs[from][setting])]).toEqual([
        from,
        setting,
        { host: to, port: isService(to) ? configs[to].HTTP_PORT : configs[to].PORT },
      ]);
    // Nothing given that components.json does not imply (a call the services' callers lists do not allow).
    for (const c of components)
      for (const name of Object.keys(envOf(c)).filter((k) => /_GRPC_ADDR$|_PAGE_URL$/.test(k)))
        expect([...grpcAddresses, ...pageAddresses].map(([from, setting]) => `${from} ${setting}`)).toContain(
          `${c} ${name}`,
        );
    // Connection URLs hold passwords: they are secret files (make-secrets.sh writes them), read here as the container would.
    const urlIn = (c: Component, name: string) => readFileSync(mounted(envOf(c)[`${name}_FILE`]), 'utf8').trim();
    for (const c of components) {
      if (isService(c)) {
        const url = new URL(urlIn(c, 'MONGO_URL'));
        expect([c, url.hostname, url.username, url.pathname, url.searchParams.get('authSource')]).toEqual([
          c,
          'mongodb',
          c,
          `/licensing_${c}`,
          `licensing_${c}`,
        ]);
      }
      if (natsComponents.includes(c)) expect(target(configs[c].NATS_URL)).toEqual({ host: 'nats', port: 4222 });
    }
    expect(target(urlIn('gateway', 'REDIS_URL'))).toEqual({ host: 'redis', port: 6379 });
    expect(new URL(urlIn('gateway', 'REDIS_URL')).username).toBe('gateway');
    expect(target(urlIn('web', 'REDIS_URL'))).toEqual({ host: 'redis', port: 6379 });
    expect(new URL(urlIn('web', 'REDIS_URL')).username).toBe('web');
    const ports = components.flatMap((c) => [configs[c].METRICS_PORT, isService(c) ? grpcPort(c) : configs[c].PORT]);
    expect(new Set(ports).size).toBe(ports.length);
  });

  it('the gateway takes CORS_ALLOWED_ORIGINS from the shell or .env, empty (no CORS) unless set', () => {
    // Given as compose interpolates it: the variable, with an empty default.
    expect(services.gateway.environment.CORS_ALLOWED_ORIGINS).toMatch(/^\$\{CORS_ALLOWED_ORIGINS:-\}$/);
    expect(configs.gateway.CORS_ALLOWED_ORIGINS).toBe('');
    expect(corsPolicyOf(configs.gateway.CORS_ALLOWED_ORIGINS)).toEqual({ kind: 'none' });
    // Only the gateway reads it.
    for (const c of components.filter((x) => x !== 'gateway'))
      expect([c, services[c].environment.CORS_ALLOWED_ORIGINS]).toEqual([c, undefined]);
  });

  it('the gateway serves HTTPS with the mounted certificate and publishes its port', () => {
    const gw = configs.gateway as GatewayConfig;
    expect(gw.TLS_CERT_FILE).toBe('/run/secrets/tls.crt');
    // With the files make-secrets.sh wrote, as the container sees them.
    expect(() =>
      checkTransportConfig({ ...gw, TLS_CERT_FILE: mounted(gw.TLS_CERT_FILE), TLS_KEY_FILE: mounted(gw.TLS_KEY_FILE) }),
    ).not.toThrow();
    expect(services.gateway.secrets).toEqual(expect.arrayContaining(['tls.crt', 'tls.key']));
    expect(services.gateway.ports).toEqual([`${gw.PORT}:${gw.PORT}`]);
  });

  it.each(components)('%s: has a healthcheck on its own port and starts after the health of what it needs', (c) => {
    const test = services[c].healthcheck.test as string[];
    expect(test.slice(0, 3)).toEqual(['CMD', 'node', 'packages/runtime/dist/grpc/healthcheck.js']);
    if (c === 'gateway') expect(test.slice(3)).toEqual(['http', `https://127.0.0.1:${configs.gateway.PORT}/readyz`]);
    else if (c === 'web') expect(test.slice(3)).toEqual(['http', `http://127.0.0.1:${configs.web.PORT}/healthz`]);
    else expect(test.slice(3)).toEqual(['grpc', `127.0.0.1:${grpcPort(c)}`]);
    // The web component needs Redis and the services it calls; the gateway everything, the web component included.
    const needs =
      c === 'gateway'
        ? ['nats', 'redis', ...components.filter((x) => x !== c)]
        : c === 'web'
          ? ['redis', ...grpcAddresses.filter(([from]) => from === c).map(([, , to]) => to)]
          : ['mongodb', 'nats'];
    for (const dep of needs)
      expect([dep, services[c].depends_on[dep]]).toEqual([dep, { condition: 'service_healthy' }]);
    for (const dep of Object.keys(services[c].depends_on).filter((d) => d !== 'events-setup'))
      expect(services[dep].healthcheck).toBeDefined();
  });
});

describe('deploy/Dockerfile', () => {
  const dockerfile = read('deploy/Dockerfile');
  const stages = dockerfile.split(/^FROM /m).slice(1);

  it('is multi-stage and the runtime stage has no dev dependencies, no sources and no root', () => {
    expect(stages.length).toBeGreaterThanOrEqual(3);
    const runtime = stages[stages.length - 1];
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/COPY --from=prod-deps \/app\/node_modules node_modules/);
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
    expect(runtime).not.toMatch(/COPY (proto|packages|services|gateway|scripts) /);
    expect(runtime).toMatch(/NODE_ENV=production/);
  });

  it('installs every component, builds from components.json and copies the dist of every workspace the entry points need', () => {
    const [deps, build] = stages;
    const runtime = stages[stages.length - 1];
    expect(build).toMatch(/^COPY .*\bcomponents\.json\b.* \.\/$/m); // scripts/build.mjs reads it
    for (const dir of ['proto', 'packages/runtime', ...components.map((c) => componentOf(c).folder)]) {
      expect(deps).toContain(`COPY ${dir}/package.json ${dir}/`);
      expect(runtime).toContain(`COPY --from=build /app/${dir}/dist ${dir}/dist`);
      expect(runtime).toContain(`COPY --from=build /app/${dir}/package.json ${dir}/`);
    }
    expect(existsSync(join(root, 'packages/runtime/src/grpc/healthcheck.ts'))).toBe(true);
  });

  it('keeps secrets and local state out of the build context', () => {
    const ignore = read('.dockerignore');
    for (const p of ['node_modules', '.data', 'deploy/secrets', '.env']) expect(ignore).toContain(p);
  });
});
