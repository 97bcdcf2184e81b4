import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { parse } from 'yaml';
import { eventsSetupSchema, loadConfig } from '@licensing/runtime';
import { join } from 'node:path';
import {
  optionalSecret,
  componentOf,
  read,
  components,
  natsComponents,
  configFrom,
  grpcAddresses,
  pageAddresses,
  requiredSettings,
  root,
  secretSettings,
  target,
  yamlDocsOf,
  yamlOf,
  type Component,
} from './support';
import { overlay, overlays, validateAgainstSchemas } from './k8s';

// The manifests under deploy/k8s cannot be applied here (no cluster); their
// structure is checked instead, on what the production overlay applies: selectors
// match labels, probes and limits are there, pods are non-root with a read-only root,
// every setting is given and agrees with docker-compose.yml. The rules every overlay
// keeps (schemas, PDBs, spread, labels, settings) are in overlays.test.ts.

type K8s = Record<string, any>;
const kustomization = yamlOf('deploy/k8s/base/kustomization.yaml');
const docs: K8s[] = overlay('production');
const secretExample = yamlOf('deploy/k8s/secret.example.yaml');
const configMap = docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === 'licensing-config')!;
const compose = yamlOf('docker-compose.yml').services as Record<string, any>;
const pkg = JSON.parse(require('node:fs').readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };

const find = (kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name);
const container = (c: Component) => find('Deployment', c)!.spec.template.spec.containers[0];

/** The environment a pod of `c` gets: the ConfigMap, then its own env. */
function envOf(c: Component): Record<string, string> {
  const ctr = container(c);
  const env: Record<string, string> = {};
  for (const from of ctr.envFrom ?? []) {
    expect(from.configMapRef.name).toBe(configMap.metadata.name);
    Object.assign(env, configMap.data);
  }
  for (const e of ctr.env ?? []) env[e.name] = String(e.value);
  return env;
}

describe('Kubernetes manifests', () => {
  it('every file in deploy/k8s/base is listed in its kustomization.yaml; the Secret and the tools in none', () => {
    const files = readdirSync(join(root, 'deploy/k8s/base')).filter(
      (f) => f.endsWith('.yaml') && f !== 'kustomization.yaml',
    );
    expect(files.filter((f) => !kustomization.resources.includes(f))).toEqual([]);
    expect(kustomization.images).toEqual([{ name: 'licensing', newTag: pkg.version }]);
    // The Secret is made by hand (an apply never overwrites it); the operator Job runs on demand.
    expect(readdirSync(join(root, 'deploy/k8s')).sort()).toEqual(
      ['base', 'components', 'overlays', 'secret.example.yaml', 'tools'].sort(),
    );
    for (const name of overlays) {
      expect(overlay(name).filter((d) => d.kind === 'Secret')).toEqual([]);
      expect(overlay(name).filter((d) => d.metadata.generateName)).toEqual([]);
    }
  });

  it('has a manifest for every component in components.json (deploy/k8s/<name>.yaml), and no other Deployment', () => {
    for (const c of components) expect([c, kustomization.resources.includes(`${c}.yaml`)]).toEqual([c, true]);
    const deployments = docs.filter((d) => d.kind === 'Deployment').map((d) => d.metadata.name);
    expect(deployments).toEqual(components);
    for (const c of components)
      expect(yamlDocsOf(`deploy/k8s/base/${c}.yaml`).map((d) => `${d.kind} ${d.metadata.name}`)).toEqual(
        expect.arrayContaining([`Deployment ${c}`, `Service ${c}`]),
      );
  });

  it.each(components)('%s: listens on its ports in components.json (deployPorts), and its Service offers them', (c) => {
    const { kind, deployPorts } = componentOf(c);
    const config = configFrom(c, envOf(c));
    const containerPort = (name: string) => container(c).ports.find((p: K8s) => p.name === name)?.containerPort;
    const servicePorts = find('Service', c)!.spec.ports.map((p: K8s) => `${p.targetPort}`);
    const expected: [string, number | undefined, unknown][] =
      kind !== 'service'
        ? [
            ['http', deployPorts.http, config.PORT],
            ['metrics', deployPorts.metrics, config.METRICS_PORT],
          ]
        : [
            ['grpc', deployPorts.grpc, config.GRPC_PORT],
            ['metrics', deployPorts.metrics, config.METRICS_PORT],
            ...(deployPorts.http !== undefined
              ? [['http', deployPorts.http, config.HTTP_PORT] as [string, number, unknown]]
              : []),
          ];
    for (const [name, port, setting] of expected) {
      expect([c, name, containerPort(name), setting]).toEqual([c, name, port, port]);
      expect(servicePorts).toContain(name);
    }
    // No port the registry does not know of.
    expect(
      container(c)
        .ports.map((p: K8s) => p.name)
        .sort(),
    ).toEqual(expected.map(([name]) => name).sort());
  });

  it.each(components)(
    '%s: a Deployment whose selector matches its pod labels, and a Service selecting those pods',
    (c) => {
      const dep = find('Deployment', c)!;
      const svc = find('Service', c)!;
      expect(dep).toBeDefined();
      expect(svc).toBeDefined();
      const labels = dep.spec.template.metadata.labels;
      for (const [k, v] of Object.entries(dep.spec.selector.matchLabels)) expect(labels[k]).toBe(v);
      for (const [k, v] of Object.entries(svc.spec.selector)) expect(labels[k]).toBe(v);
      // Two at least: the HPA's minimum where one scales it (the Deployment then names no count), else its own.
      const hpa = find('HorizontalPodAutoscaler', c);
      expect(hpa ? hpa.spec.minReplicas : dep.spec.replicas).toBeGreaterThanOrEqual(2);
      // Every Service port targets a named container port.
      const named = new Set(container(c).ports.map((p: K8s) => p.name));
      for (const p of svc.spec.ports) expect(named).toContain(p.targetPort);
    },
  );

  it.each(components)(
    '%s: same image and entry point as compose, non-root, read-only root, no privilege escalation',
    (c) => {
      const ctr = container(c);
      const pod = find('Deployment', c)!.spec.template.spec;
      expect(ctr.image).toBe(`licensing:${pkg.version}`);
      expect(compose[c].image.split(':')[0]).toBe(ctr.image.split(':')[0]);
      expect(ctr.command).toEqual(compose[c].command);
      expect(ctr.command.slice(-1)[0]).toBe(componentOf(c).entry);
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(ctr.securityContext).toMatchObject({
        runAsNonRoot: true,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      });
      expect(ctr.securityContext.runAsUser).not.toBe(0);
      expect(ctr.volumeMounts).toEqual(expect.arrayContaining([{ name: 'tmp', mountPath: '/tmp' }]));
      expect(pod.automountServiceAccountToken).toBe(false);
    },
  );

  it.each(components)('%s: readiness and liveness probes on its own port, resource requests and limits', (c) => {
    const ctr = container(c);
    const config = configFrom(c, envOf(c));
    if (c === 'web') {
      expect(ctr.readinessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(ctr.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(ctr.ports.find((p: K8s) => p.name === 'http').containerPort).toBe(config.PORT);
    } else if (c === 'gateway') {
      expect(ctr.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(ctr.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(ctr.ports.find((p: K8s) => p.name === 'http').containerPort).toBe(config.PORT);
    } else {
      expect(ctr.readinessProbe.grpc).toEqual({ port: config.GRPC_PORT });
      expect(ctr.livenessProbe.grpc).toEqual({ port: config.GRPC_PORT, service: 'liveness' });
      expect(ctr.ports.find((p: K8s) => p.name === 'grpc').containerPort).toBe(config.GRPC_PORT);
    }
    expect(ctr.ports.find((p: K8s) => p.name === 'metrics').containerPort).toBe(config.METRICS_PORT);
    for (const kind of ['requests', 'limits']) {
      expect(ctr.resources[kind].cpu).toBeDefined();
      expect(ctr.resources[kind].memory).toBeDefined();
    }
  });

  it.each(components)(
    '%s: every required setting is given, secrets as files from the Secret, ports as in compose',
    (c) => {
      const env = envOf(c);
      const config = configFrom(c, env);
      for (const name of requiredSettings(c)) expect(env[name] ?? env[`${name}_FILE`]).toBeDefined();
      const mounted = find('Deployment', c)!.spec.template.spec.volumes.find((v: K8s) => v.name === 'secrets').secret;
      expect(mounted.secretName).toBe(secretExample.metadata.name);
      for (const name of secretSettings(c)) {
        expect(env[name]).toBeUndefined();
        if (optionalSecret(c, name) && !env[`${name}_FILE`]) continue;
        const key = env[`${name}_FILE`].replace('/run/secrets/', '');
        expect(mounted.items).toContainEqual({ key, path: key });
        expect(Object.keys(secretExample.stringData)).toContain(key);
      }
      expect(Object.values(secretExample.stringData)).toEqual(Object.values(secretExample.stringData).map(() => '')); // shape only, never values
      // Same ports as compose, so one set of dashboards and alerts fits both.
      const composeEnv = compose[c].environment as Record<string, string>;
      for (const k of ['GRPC_PORT', 'METRICS_PORT', 'HTTP_PORT'])
        if (composeEnv[k] !== undefined) expect([k, String(config[k])]).toEqual([k, composeEnv[k]]);
      // Same setting names as compose, give or take what differs by design (TLS at the Ingress, drain delay).
      const names = (o: object) =>
        Object.keys(o).filter(
          (k) =>
            ![
              'TLS_CERT_FILE',
              'TLS_KEY_FILE',
              'TRUSTED_PROXIES',
              'SHUTDOWN_DRAIN_DELAY_MS',
              'GRPC_HOST',
              'HOST',
              'REDIS_URL',
              'MONGO_URL',
            ].includes(k),
        );
      expect(names(env).filter((k) => k in configFrom(c, env))).toEqual(
        expect.arrayContaining(names(composeEnv).filter((k) => k in config)),
      );
    },
  );

  it('addresses name a Service and its port; gRPC addresses resolve every pod (headless Services)', () => {
    for (const [from, setting, to] of grpcAddresses) {
      const addr = String(configFrom(from, envOf(from))[setting]);
      expect(addr).toMatch(/^dns:\/\/\//);
      const t = target(addr);
      const svc = find('Service', t.host)!;
      expect([from, setting, svc?.metadata.name]).toEqual([from, setting, to]);
      expect(svc.spec.clusterIP).toBe('None');
      expect(svc.spec.ports.map((p: K8s) => p.port)).toContain(t.port);
    }
    for (const [from, setting, to] of pageAddresses) {
      const page = target(String(configFrom(from, envOf(from))[setting]));
      expect([from, setting, page.host]).toEqual([from, setting, to]);
      expect(find('Service', page.host)!.spec.ports.map((p: K8s) => p.port)).toContain(page.port);
    }
    // Nothing given that components.json does not imply.
    const implied = [...grpcAddresses, ...pageAddresses].map(([from, setting]) => `${from} ${setting}`);
    for (const c of components)
      for (const name of Object.keys(envOf(c)).filter((k) => /_GRPC_ADDR$|_PAGE_URL$/.test(k)))
        expect(implied).toContain(`${c} ${name}`);
  });

  it('the gateway is production, behind an HTTPS Ingress it trusts, and drains before it stops', () => {
    const config = configFrom('gateway', envOf('gateway'));
    expect(config.NODE_ENV).toBe('production');
    expect(config.TRUSTED_PROXIES).not.toBe('');
    expect(config.SHUTDOWN_DRAIN_DELAY_MS).toBeGreaterThan(0);
    const ingress = find('Ingress', 'gateway')!;
    expect(ingress.spec.tls[0].secretName).toBeTruthy();
    // The pages go straight to the web component's Service; everything else to the gateway's.
    const backends = Object.fromEntries(
      ingress.spec.rules[0].http.paths.map((p: K8s) => [p.path, p.backend.service.name]),
    );
    expect(backends).toEqual({ '/dashboard': 'web', '/portal': 'web', '/checkout': 'web', '/': 'gateway' });
    const pod = find('Deployment', 'gateway')!.spec.template.spec;
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(
      (config.SHUTDOWN_DRAIN_DELAY_MS as number) + (config.SHUTDOWN_TIMEOUT_MS as number),
    );
  });

  it('the events-setup Job makes the event stream as the NATS set-up user, with the same command as compose', () => {
    const job = find('Job', 'events-setup')!;
    const pod = job.spec.template.spec;
    const ctr = pod.containers[0];
    expect(ctr.image).toBe(`licensing:${pkg.version}`);
    expect(ctr.command).toEqual(compose['events-setup'].command);
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(ctr.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    const env: Record<string, string> = { ...configMap.data };
    for (const e of ctr.env) env[e.name] = String(e.value);
    expect(env).toMatchObject({ NATS_USER: 'setup', NATS_PASSWORD_FILE: '/run/secrets/nats_password_setup' });
    expect(pod.volumes.find((v: K8s) => v.name === 'secrets').secret.items).toEqual([
      { key: 'nats_password_setup', path: 'nats_password_setup' },
      { key: 'nats_password_setup_alt', path: 'nats_password_setup_alt' },
    ]);
    expect(Object.keys(secretExample.stringData)).toContain('nats_password_setup');
    const config = loadConfig(eventsSetupSchema, { ...env, NATS_PASSWORD: 'value-of-NATS_PASSWORD' });
    for (const c of natsComponents) expect([c, config.NATS_URL]).toEqual([c, configFrom(c, envOf(c)).NATS_URL]);
  });

  it("NATS runs as compose runs it (components/nats): start.sh over the generated nats.conf, every login's password from the Secret, JetStream on its own volume", () => {
    const sts = find('StatefulSet', 'nats')!;
    const pod = sts.spec.template.spec;
    const ctr = pod.containers[0];
    const nats = compose.nats;
    // The same release, entry point and arguments as compose.
    expect(ctr.image).toBe(nats.image);
    expect(ctr.command).toEqual(nats.entrypoint);
    expect(ctr.args).toEqual(nats.command);
    // /etc/nats holds the two files compose mounts from deploy/nats, byte for byte (the ConfigMap is generated).
    const mounts = Object.fromEntries(ctr.volumeMounts.map((m: K8s) => [m.name, m]));
    expect(mounts.config).toEqual({ name: 'config', mountPath: '/etc/nats', readOnly: true });
    const configMap = find('ConfigMap', pod.volumes.find((v: K8s) => v.name === 'config').configMap.name)!;
    expect(configMap.data).toEqual({
      'nats.conf': read('deploy/nats/nats.conf'),
      'start.sh': read('deploy/nats/start.sh'),
    });
    // Every password start.sh reads (compose's NATS secrets), from the one Secret, where start.sh looks.
    expect(mounts.secrets).toEqual({ name: 'secrets', mountPath: '/run/secrets', readOnly: true });
    const secrets = pod.volumes.find((v: K8s) => v.name === 'secrets').secret;
    expect(secrets.secretName).toBe(secretExample.metadata.name);
    expect(secrets.items.map((i: K8s) => i.key).sort()).toEqual([...nats.secrets].sort());
    for (const i of secrets.items) {
      expect(i.path).toBe(i.key);
      expect(Object.keys(secretExample.stringData)).toContain(i.key);
    }
    // JetStream's store (-sd) on the pod's own volume, kept across restarts.
    const storeDir = ctr.args[ctr.args.indexOf('-sd') + 1];
    expect(mounts.data.mountPath).toBe(storeDir);
    expect(sts.spec.volumeClaimTemplates.map((v: K8s) => v.metadata.name)).toEqual(['data']);
    // Probes on the monitoring port (-m), non-root, read-only root, limits.
    const monitor = Number(ctr.args[ctr.args.indexOf('-m') + 1]);
    expect(ctr.ports.find((p: K8s) => p.name === 'monitor').containerPort).toBe(monitor);
    for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe'])
      expect([probe, ctr[probe].httpGet.port, ctr[probe].httpGet.path]).toEqual([
        probe,
        'monitor',
        expect.stringMatching(/^\/healthz/),
      ]);
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(ctr.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(pod.automountServiceAccountToken).toBe(false);
    for (const kind of ['requests', 'limits'])
      expect(Object.keys(ctr.resources[kind]).sort()).toEqual(['cpu', 'memory']);
    // The nodes start together: each becomes healthy only once two of them form the JetStream cluster.
    expect(sts.spec.podManagementPolicy).toBe('Parallel');
  });

  it('the migrations run as a one-off Job, one container per service with its own settings', () => {
    const job = yamlOf('deploy/k8s/tools/migrate-job.yaml');
    expect(job.kind).toBe('Job');
    expect(job.metadata.generateName).toBe('licensing-migrate-');
    expect(kustomization.resources).not.toContain('tools/migrate-job.yaml');
    expect(validateAgainstSchemas([job])).toEqual([{ id: expect.any(String), errors: [], unknown: [] }]);
    const pod = job.spec.template;
    expect(pod.metadata.labels['app.kubernetes.io/name']).toBe('licensing-migrate');
    const services = components.filter((c) => componentOf(c).kind === 'service');
    expect(pod.spec.containers.map((c: K8s) => c.name)).toEqual(services);
    const mounted = pod.spec.volumes[0].secret.items.map((i: { key: string }) => i.key);
    for (const ctr of pod.spec.containers) {
      const svc = ctr.name as Component;
      expect(ctr.image).toBe(container(svc).image);
      expect(ctr.command).toEqual(['node', '--enable-source-maps', 'scripts/dist/admin.js']);
      expect(ctr.args).toEqual(['migrate', '--service', svc]);
      expect(ctr.securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true });
      const env: Record<string, string> = { ...configMap.data };
      for (const e of ctr.env) env[e.name] = String(e.value);
      // The service's settings load (a job needs no INTERNAL_CALLERS), and name the same database and secrets.
      const config = configFrom(svc, { ...env, INTERNAL_CALLERS: 'unused' });
      const deployed = configFrom(svc, envOf(svc));
      expect([svc, config.MONGO_DB]).toEqual([svc, deployed.MONGO_DB]);
      for (const [name, value] of Object.entries(env).filter(([n]) => n.endsWith('_FILE'))) {
        if (name === 'NATS_PASSWORD_FILE' || name === 'INTERNAL_CALLERS_FILE') continue;
        expect([svc, name, value]).toEqual([svc, name, envOf(svc)[name]]);
        const key = value.replace('/run/secrets/', '');
        expect(mounted).toContain(key);
        expect(Object.keys(secretExample.stringData ?? secretExample.data)).toContain(key);
      }
    }
    // MongoDB admits the Job's pods.
    const policy = docs.find((d) => d.kind === 'NetworkPolicy' && d.metadata.name === 'mongodb')!;
    const admitted = policy.spec.ingress.flatMap((r: { from: { podSelector?: { matchLabels: object } }[] }) =>
      r.from.map((f) => f.podSelector?.matchLabels),
    );
    expect(admitted).toContainEqual({ 'app.kubernetes.io/name': 'licensing-migrate' });
  });

  it('the operator CLI runs as a one-off Job (not applied with the rest) that the account service admits', () => {
    const job = yamlOf('deploy/k8s/tools/operator-job.yaml');
    expect(job.kind).toBe('Job');
    expect(job.metadata.generateName).toBe('licensing-operator-'); // kubectl create -f makes a new one each time
    expect(kustomization.resources).not.toContain('tools/operator-job.yaml');
    const pod = job.spec.template;
    expect(pod.metadata.labels['app.kubernetes.io/name']).toBe('licensing-operator');
    expect(validateAgainstSchemas([job])).toEqual([{ id: expect.any(String), errors: [], unknown: [] }]);
    for (const labels of [job.metadata.labels, pod.metadata.labels])
      expect(labels).toMatchObject({
        'app.kubernetes.io/version': pkg.version,
        'app.kubernetes.io/component': 'operator',
        'app.kubernetes.io/part-of': 'licensing',
      });
    expect(pod.spec.restartPolicy).toBe('Never');
    const ctr = pod.spec.containers[0];
    expect(ctr.image).toBe(container('account').image);
    expect(ctr.command).toEqual(['node', '--enable-source-maps', 'scripts/dist/admin.js']);
    expect(compose.admin.entrypoint).toEqual(ctr.command);
    expect(ctr.securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true });
    const env = Object.fromEntries(ctr.env.map((e: { name: string; value: string }) => [e.name, e.value]));
    // The same address the account service's other callers use, and the operator's token from the Secret.
    expect(env.ACCOUNT_GRPC_ADDR).toBe(
      find('Deployment', 'gateway')!.spec.template.spec.containers[0].env.find(
        (e: { name: string }) => e.name === 'ACCOUNT_GRPC_ADDR',
      ).value,
    );
    expect(env.INTERNAL_TOKEN_FILE).toBe('/run/secrets/internal_token_operator');
    expect(pod.spec.volumes[0].secret).toEqual({
      secretName: 'licensing-secrets',
      items: [
        { key: 'internal_token_operator', path: 'internal_token_operator' },
        { key: 'internal_token_operator_alt', path: 'internal_token_operator_alt' },
      ],
    });
    expect(Object.keys(secretExample.stringData ?? secretExample.data)).toContain('internal_token_operator');
    // The account service's NetworkPolicy admits pods with that label.
    const policy = docs.find((d) => d.kind === 'NetworkPolicy' && d.metadata.name === 'account')!;
    const admitted = policy.spec.ingress.flatMap((r: { from: { podSelector?: { matchLabels: object } }[] }) =>
      r.from.map((f) => f.podSelector?.matchLabels),
    );
    expect(admitted).toContainEqual({ 'app.kubernetes.io/name': 'licensing-operator' });
  });

  it.each(overlays)(
    "%s: the operator Job's line in its header creates it in the overlay's namespace, with the overlay's instance label",
    (name) => {
      const file = 'deploy/k8s/tools/operator-job.yaml';
      const lines = read(file)
        .split('\n')
        .map((l) => new RegExp(`^#\\s+${name}:\\s+(.+)$`).exec(l)?.[1])
        .filter((l): l is string => l !== undefined);
      expect(lines).toHaveLength(1);
      const command = /^(?:(.+?)\s*\|\s*)?kubectl create -n (\S+) -f (\S+)$/.exec(lines[0]);
      expect(command).not.toBeNull();
      const [, pipe, namespace, from] = command!;
      // What kubectl would get: the file, or what the line's pipe makes of it (run here, from the repository root).
      const manifest = from === '-' ? execFileSync('sh', ['-c', pipe], { cwd: root, encoding: 'utf8' }) : read(from);
      const job = parse(manifest) as K8s;
      const kustomization = yamlOf(`deploy/k8s/overlays/${name}/kustomization.yaml`);
      expect(namespace).toBe(kustomization.namespace);
      const instance = kustomization.labels[0].pairs['app.kubernetes.io/instance'];
      expect(instance).toBe(`licensing-${name}`);
      // The file's Job with the overlay's instance on it and on its pod; nothing else changed.
      const expected = yamlOf(file);
      for (const labels of [expected.metadata.labels, expected.spec.template.metadata.labels])
        labels['app.kubernetes.io/instance'] = instance;
      expect(job).toEqual(expected);
      expect(validateAgainstSchemas([job])).toEqual([{ id: expect.any(String), errors: [], unknown: [] }]);
      // Its pods are where the overlay's account service admits them (the same namespace, the operator's label).
      const account = overlay(name).find((d) => d.kind === 'NetworkPolicy' && d.metadata.name === 'account')!;
      expect(account.metadata.namespace).toBe(namespace);
    },
  );

  it("every NATS password and internal token a pod mounts comes with its _alt slot, as compose mounts it (the rotation runbook's second login or token)", () => {
    const slotted = (names: string[]) => names.filter((n) => /^(nats_password|internal_token)_[a-z]+$/.test(n));
    const pods = [
      ...components.map((c) => [c, find('Deployment', c)!.spec.template.spec] as const),
      [
        'events-setup',
        docs.find((d) => d.kind === 'Job' && d.metadata.name.includes('events-setup'))!.spec.template.spec,
      ] as const,
      ['nats', find('StatefulSet', 'nats')!.spec.template.spec] as const,
    ];
    for (const [name, pod] of pods) {
      const keys: string[] = pod.volumes.find((v: K8s) => v.name === 'secrets').secret.items.map((i: K8s) => i.key);
      expect(slotted(keys).length).toBeGreaterThan(0);
      for (const key of slotted(keys)) expect([name, keys]).toEqual([name, expect.arrayContaining([`${key}_alt`])]);
      // compose mounts the same slots into the same component.
      const composeSecrets: string[] = compose[name].secrets;
      expect([name, slotted(composeSecrets).sort()]).toEqual([name, slotted(keys).sort()]);
      for (const key of keys) expect([name, composeSecrets]).toEqual([name, expect.arrayContaining([key])]);
    }
    // The example Secret has a key for each slot, empty (closed) until a rotation fills it.
    const example = Object.keys(secretExample.stringData);
    for (const key of slotted(example)) expect(example).toContain(`${key}_alt`);
    expect(slotted(example).length).toBe(6 + components.length + 1); // tokens, a NATS login per component, setup
  });

  it('the gateway and the licence service scale out on CPU', () => {
    for (const name of ['gateway', 'license']) {
      const hpa = find('HorizontalPodAutoscaler', name)!;
      expect(hpa.apiVersion).toBe('autoscaling/v2');
      expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name });
      expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
      expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
      expect(container(name as Component).resources.requests.cpu).toBeDefined(); // utilisation needs a request
    }
  });
});
