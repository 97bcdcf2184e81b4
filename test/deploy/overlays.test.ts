import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { corsPolicyOf } from '../../gateway/src/auth/cors';
import { components, root } from './support';
import { find, k8sDir, type K8sObject, overlay, overlays, settingsOf, validateAgainstSchemas } from './k8s';

// What every overlay under deploy/k8s/overlays applies, rendered as `kubectl apply -k` would
// (test/deploy/kustomize.ts), checked object by object against the Kubernetes schemas and against
// the rules operators expect: a PodDisruptionBudget and topology spread per Deployment, no replica
// count where an HPA owns it, a ServiceMonitor on every metrics port, the recommended labels, and
// the per-cluster settings taken from the overlay's settings.yaml.

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
const recommended = [
  'app.kubernetes.io/name',
  'app.kubernetes.io/instance',
  'app.kubernetes.io/version',
  'app.kubernetes.io/component',
  'app.kubernetes.io/part-of',
  'app.kubernetes.io/managed-by',
];
const ofKind = (objs: K8sObject[], kind: string) => objs.filter((o) => o.kind === kind);
/** Does a matchLabels selector pick a pod with these labels? */
const picks = (matchLabels: Record<string, string>, labels: Record<string, string>) =>
  Object.keys(matchLabels).length > 0 && Object.entries(matchLabels).every(([k, v]) => labels?.[k] === v);
const podLabels = (d: K8sObject) => d.spec.template.metadata.labels as Record<string, string>;

it('there are the development and production overlays', () => {
  expect(overlays).toEqual(['development', 'production']);
});

describe('the schema check itself', () => {
  // A check that passes everything proves nothing: every kind the overlays apply must fail on an
  // unknown field and on a wrong type.
  const kinds = new Map<string, K8sObject>();
  for (const name of overlays) for (const o of overlay(name)) kinds.set(`${o.apiVersion} ${o.kind}`, o);

  it('has a schema for every kind the overlays apply, CRDs (ServiceMonitor, HTTPRoute) included', () => {
    expect([...kinds.keys()]).toEqual(
      expect.arrayContaining(['monitoring.coreos.com/v1 ServiceMonitor', 'gateway.networking.k8s.io/v1 HTTPRoute']),
    );
    expect(
      validateAgainstSchemas([{ apiVersion: 'example.com/v1', kind: 'Nope', metadata: { name: 'x' } }])[0].errors,
    ).toEqual(['no schema for example.com/v1 Nope']);
  });

  it('reports an unknown field, at any depth, on every kind', () => {
    const broken = [...kinds.values()].map((o) => {
      const copy = structuredClone(o);
      copy.metadata.labelz = { a: 'b' }; // a typo of labels
      if (copy.spec?.template?.spec) copy.spec.template.spec.containers[0].imagePullPolicyy = 'Always';
      return copy;
    });
    for (const [i, r] of validateAgainstSchemas(broken).entries()) {
      expect([r.id, r.unknown]).toEqual([r.id, expect.arrayContaining(['/metadata/labelz'])]);
      if (broken[i].spec?.template?.spec)
        expect(r.unknown).toContain('/spec/template/spec/containers/0/imagePullPolicyy');
    }
  });

  it('reports a value of the wrong type on every kind', () => {
    const broken = [...kinds.values()].map((o) => ({ ...structuredClone(o), metadata: { ...o.metadata, name: 42 } }));
    for (const r of validateAgainstSchemas(broken))
      expect([r.id, r.errors.join()]).toEqual([r.id, expect.stringMatching(/name must be string/)]);
  });
});

describe.each(overlays)('overlay %s', (name) => {
  const objs = overlay(name);
  const deployments = ofKind(objs, 'Deployment');
  const settings = settingsOf(name);

  it('every object is valid against its schema, with no field the schema does not know', () => {
    expect(objs.length).toBeGreaterThan(20);
    const problems = validateAgainstSchemas(objs).filter((r) => r.errors.length > 0 || r.unknown.length > 0);
    expect(problems).toEqual([]);
  });

  it("has a Deployment for every component, each object once, all in the overlay's namespace", () => {
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual([...components].sort());
    const ids = objs.map((o) => `${o.kind} ${o.metadata.name}`);
    expect(ids.length).toBe(new Set(ids).size);
    const namespace = parse(readFileSync(join(k8sDir, 'overlays', name, 'kustomization.yaml'), 'utf8')).namespace;
    expect(namespace).toBeTruthy();
    for (const o of objs)
      expect([o.kind, o.metadata.name, o.metadata.namespace]).toEqual([o.kind, o.metadata.name, namespace]);
  });

  it('every object and pod carries the recommended labels; selectors only the stable name', () => {
    const instance = `licensing-${name}`;
    const images = new Set<string>();
    for (const o of objs) {
      const labeled = [o.metadata.labels, ...(o.spec?.template ? [podLabels(o)] : [])];
      for (const labels of labeled) {
        expect([o.kind, o.metadata.name, recommended.filter((l) => !labels?.[l])]).toEqual([
          o.kind,
          o.metadata.name,
          [],
        ]);
        expect(labels).toMatchObject({
          'app.kubernetes.io/instance': instance,
          'app.kubernetes.io/version': pkg.version,
          'app.kubernetes.io/part-of': 'licensing',
        });
      }
      for (const c of o.spec?.template?.spec?.containers ?? [])
        if (c.image.startsWith('licensing')) images.add(c.image);
    }
    // The version label says what runs: the image tag.
    expect([...images]).toEqual([`licensing:${pkg.version}`]);
    for (const d of deployments) {
      // A selector cannot change after creation: version or instance in one would break an upgrade or a rename.
      expect(d.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': d.metadata.name });
      expect(podLabels(d)['app.kubernetes.io/name']).toBe(d.metadata.name);
    }
    for (const s of ofKind(objs, 'Service')) expect(Object.keys(s.spec.selector)).toEqual(['app.kubernetes.io/name']);
  });

  it('a PodDisruptionBudget for every Deployment and StatefulSet, selecting its pods only, that never blocks a drain outright', () => {
    const pdbs = ofKind(objs, 'PodDisruptionBudget');
    const workloads = [...deployments, ...ofKind(objs, 'StatefulSet')];
    for (const d of workloads) {
      const mine = pdbs.filter((p) => picks(p.spec.selector.matchLabels, podLabels(d)));
      expect([d.metadata.name, mine.length]).toEqual([d.metadata.name, 1]);
      const [pdb] = mine;
      // maxUnavailable, not minAvailable: with one replica (development) minAvailable: 1 would forbid every eviction.
      expect(pdb.spec.maxUnavailable).toBeGreaterThanOrEqual(1);
      expect(pdb.spec.minAvailable).toBeUndefined();
      const others = workloads.filter((x) => x !== d && picks(pdb.spec.selector.matchLabels, podLabels(x)));
      expect(others).toEqual([]);
    }
    expect(pdbs).toHaveLength(workloads.length);
  });

  it('every Deployment and StatefulSet spreads its pods over zones and nodes', () => {
    for (const d of [...deployments, ...ofKind(objs, 'StatefulSet')]) {
      const spread: K8sObject[] = d.spec.template.spec.topologySpreadConstraints ?? [];
      for (const key of ['topology.kubernetes.io/zone', 'kubernetes.io/hostname']) {
        const c = spread.find((x) => x.topologyKey === key);
        expect([d.metadata.name, key, c?.maxSkew]).toEqual([d.metadata.name, key, 1]);
        expect(picks(c!.labelSelector.matchLabels, podLabels(d))).toBe(true);
        expect(['ScheduleAnyway', 'DoNotSchedule']).toContain(c!.whenUnsatisfiable);
      }
    }
  });

  it('no replica count on a Deployment an HPA scales (an apply would reset it); every other one has its own', () => {
    const hpas = ofKind(objs, 'HorizontalPodAutoscaler');
    const scaled = hpas.map((h) => h.spec.scaleTargetRef.name).sort();
    expect(scaled).toEqual(['gateway', 'license', 'web']);
    for (const h of hpas) {
      expect(h.spec.scaleTargetRef).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment' });
      expect(h.spec.minReplicas).toBeGreaterThanOrEqual(1);
      expect(h.spec.maxReplicas).toBeGreaterThan(h.spec.minReplicas);
    }
    for (const d of deployments)
      expect([d.metadata.name, d.spec.replicas === undefined]).toEqual([
        d.metadata.name,
        scaled.includes(d.metadata.name),
      ]);
  });

  it('a ServiceMonitor scrapes the metrics port of every component, and only that port', () => {
    const monitors = ofKind(objs, 'ServiceMonitor');
    expect(monitors).toHaveLength(1);
    const [sm] = monitors;
    expect(sm.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(sm.spec.endpoints.map((e: K8sObject) => e.port)).toEqual(['metrics']);
    const selected = ofKind(objs, 'Service').filter((s) => picks(sm.spec.selector.matchLabels, s.metadata.labels));
    const hasMetrics = (s: K8sObject) => s.spec.ports.some((p: K8sObject) => p.name === 'metrics');
    const scraped = selected.filter(hasMetrics);
    expect(scraped.map((s) => s.metadata.name).sort()).toEqual([...components].sort());
    // Any other Service of the system (NATS's, in production) has no metrics port: nothing scraped there.
    expect(selected.filter((s) => !hasMetrics(s)).map((s) => s.metadata.name)).toEqual(
      name === 'production' ? ['nats'] : [],
    );
    for (const s of scraped) {
      const port = s.spec.ports.find((p: K8sObject) => p.name === 'metrics');
      expect([s.metadata.name, port?.targetPort]).toEqual([s.metadata.name, 'metrics']);
      // The port the Service offers is the one the pod serves /metrics on.
      const pod = find(objs, 'Deployment', s.metadata.name)!.spec.template;
      const ctr = pod.spec.containers[0];
      expect(ctr.ports.find((p: K8sObject) => p.name === 'metrics').containerPort).toBe(port.port);
      expect(Number(pod.metadata.annotations['prometheus.io/port'])).toBe(port.port);
    }
  });

  it("takes the cluster's settings from its settings.yaml: trusted proxies, ingress class and namespace, monitoring namespace, host, Gateway, CORS origins", () => {
    // The settings ConfigMap is kustomize's input only, never applied; no placeholder of the base is left.
    expect(find(objs, 'ConfigMap', 'licensing-settings')).toBeUndefined();
    expect(JSON.stringify(objs)).not.toMatch(/set-by-overlay/);
    expect(find(objs, 'ConfigMap', 'licensing-config')!.data.TRUSTED_PROXIES).toBe(settings.trustedProxies);
    for (const cidr of settings.trustedProxies.split(','))
      expect(cidr.trim()).toMatch(/^\d+\.\d+\.\d+\.\d+\/\d+$|^[0-9a-f:]+\/\d+$/);
    const gatewayPolicy = find(objs, 'NetworkPolicy', 'gateway')!;
    expect(gatewayPolicy.spec.ingress[0].from[0].namespaceSelector.matchLabels['kubernetes.io/metadata.name']).toBe(
      settings.ingressNamespace,
    );
    // Prometheus's namespace is the only one admitted to any metrics port.
    const admitted = objs
      .filter((o) => o.kind === 'NetworkPolicy')
      .flatMap((p) => (p.spec.ingress ?? []) as K8sObject[])
      .filter((rule) => rule.from?.[0]?.namespaceSelector && rule.ports?.[0]?.port >= 9000)
      .map((rule) => rule.from[0].namespaceSelector.matchLabels['kubernetes.io/metadata.name']);
    expect(admitted).toHaveLength(8);
    expect(new Set(admitted)).toEqual(new Set([settings.monitoringNamespace]));
    for (const c of ['account', 'checkout', 'notification', 'web']) {
      const env = find(objs, 'Deployment', c)!.spec.template.spec.containers[0].env;
      expect([c, env.find((e: K8sObject) => e.name === 'PUBLIC_BASE_URL').value]).toEqual([
        c,
        `https://${settings.publicHost}`,
      ]);
    }
    // The origins allowed to call the app routes from a browser: the setting, a value the gateway accepts,
    // and none by default.
    const cors = find(objs, 'ConfigMap', 'licensing-config')!.data.CORS_ALLOWED_ORIGINS;
    expect(cors).toBe(settings.corsAllowedOrigins);
    expect(cors).toBe('');
    expect(corsPolicyOf(cors)).toEqual({ kind: 'none' });
    expect(find(objs, 'Deployment', 'gateway')!.spec.template.spec.containers[0].envFrom).toEqual([
      { configMapRef: { name: 'licensing-config' } },
    ]);
    // Exactly one way in: the Ingress, or the HTTPRoute of components/gateway-api; either to the gateway's HTTP port.
    const ingress = find(objs, 'Ingress', 'gateway');
    const route = find(objs, 'HTTPRoute', 'gateway');
    expect([ingress, route].filter(Boolean)).toHaveLength(1);
    const svc = find(objs, 'Service', 'gateway')!;
    const httpPort = svc.spec.ports.find((p: K8sObject) => p.name === 'http');
    if (ingress) {
      expect(ingress.spec.ingressClassName).toBe(settings.ingressClassName);
      expect(ingress.spec.rules.map((r: K8sObject) => r.host)).toEqual([settings.publicHost]);
      expect(ingress.spec.tls[0].hosts).toEqual([settings.publicHost]);
      // The pages go straight to the web component; everything else to the gateway.
      expect(
        ingress.spec.rules[0].http.paths.map((p: K8sObject) => [
          p.path,
          p.backend.service.name,
          p.backend.service.port,
        ]),
      ).toEqual([
        ['/dashboard', 'web', { name: 'http' }],
        ['/portal', 'web', { name: 'http' }],
        ['/checkout', 'web', { name: 'http' }],
        ['/', 'gateway', { name: 'http' }],
      ]);
    } else if (route) {
      expect(route.spec.parentRefs).toEqual([{ name: settings.gatewayName, namespace: settings.gatewayNamespace }]);
      expect(route.spec.hostnames).toEqual([settings.publicHost]);
      expect(route.spec.rules).toEqual([
        {
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
          backendRefs: [{ name: 'gateway', port: httpPort.port }],
        },
      ]);
    }
  });
});

describe('settings', () => {
  const replacements: K8sObject[] = parse(
    readFileSync(join(k8sDir, 'components/settings/kustomization.yaml'), 'utf8'),
  ).replacements;
  const used = replacements.map((r) => r.source.fieldPath.replace(/^data\./, '')).sort();

  it.each(overlays)('%s: its settings.yaml gives every setting components/settings reads, and no other', (name) => {
    const file = parse(readFileSync(join(k8sDir, 'overlays', name, 'settings.yaml'), 'utf8'));
    expect(file.metadata.annotations['config.kubernetes.io/local-config']).toBe('true');
    expect(Object.keys(file.data).sort()).toEqual([...new Set(used)].sort());
    for (const v of Object.values(file.data)) expect(v).toEqual(expect.any(String));
  });

  it('production runs the event stream as the NATS cluster test proves: its own three nodes, every one listed, 3 copies', () => {
    const objs = overlay('production');
    const settings = settingsOf('production');
    const natsUrl = find(objs, 'ConfigMap', 'licensing-config')!.data.NATS_URL as string;
    expect(natsUrl).toBe(settings.natsUrl);
    expect(natsUrl.split(',')).toHaveLength(3);
    const job = find(objs, 'Job', 'events-setup')!;
    const env = job.spec.template.spec.containers[0].env as { name: string; value: string }[];
    expect(env.find((e) => e.name === 'EVENTS_REPLICAS')?.value).toBe('3');
    // The nodes natsUrl names are the pods of the StatefulSet the overlay applies (components/nats), by
    // their names under its headless Service; their routes name the same pods, on the cluster port.
    const sts = find(objs, 'StatefulSet', 'nats')!;
    expect(sts.spec.replicas).toBe(3);
    const svc = find(objs, 'Service', sts.spec.serviceName)!;
    expect(svc.spec).toMatchObject({ clusterIP: 'None', publishNotReadyAddresses: true });
    expect(svc.spec.selector).toEqual(sts.spec.selector.matchLabels);
    const pods = Array.from({ length: sts.spec.replicas }, (_, i) => `${sts.metadata.name}-${i}.${svc.metadata.name}`);
    const ctr = sts.spec.template.spec.containers[0];
    const port = (name: string) => ctr.ports.find((p: K8sObject) => p.name === name).containerPort as number;
    expect(natsUrl.split(',')).toEqual(pods.map((p) => `nats://${p}:${port('client')}`));
    const stsEnv = Object.fromEntries(
      (ctr.env as K8sObject[]).map((e) => [e.name, e.value ?? `from ${e.valueFrom.fieldRef.fieldPath}`]),
    );
    expect(stsEnv).toMatchObject({
      NATS_CLUSTER_NAME: expect.stringMatching(/^[a-z][a-z0-9-]*$/),
      NATS_CLUSTER_ROUTES: pods.map((p) => `nats://${p}:${port('cluster')}`).join(','),
      NATS_CLUSTER_LISTEN: `0.0.0.0:${port('cluster')}`,
      // Each node under its pod's name, which it keeps across restarts.
      NATS_SERVER_NAME: 'from metadata.name',
    });
    for (const p of ['client', 'cluster'])
      expect(svc.spec.ports.find((x: K8sObject) => x.name === p)).toMatchObject({ port: port(p), targetPort: p });
    // As many copies as nodes, and the development overlay, which runs no NATS of its own, one.
    expect(Number(settings.eventsReplicas)).toBe(sts.spec.replicas);
    expect(find(overlay('development'), 'StatefulSet', 'nats')).toBeUndefined();
    expect(settingsOf('development')).toMatchObject({ natsUrl: 'nats://nats:4222', eventsReplicas: '1' });
  });

  it('every overlay applies components/settings after any component that adds what it fills', () => {
    for (const name of overlays) {
      const k = parse(readFileSync(join(k8sDir, 'overlays', name, 'kustomization.yaml'), 'utf8'));
      expect(k.resources).toEqual(['../../base', 'settings.yaml']);
      expect(k.components.at(-1)).toBe('../../components/settings');
    }
    // The Gateway API alternative is in use somewhere, so it is rendered and checked above.
    expect(overlays.some((n) => overlay(n).some((o) => o.kind === 'HTTPRoute'))).toBe(true);
    expect(overlays.some((n) => overlay(n).some((o) => o.kind === 'Ingress'))).toBe(true);
  });
});

it('every `kubectl apply -k` in the README, docs/ and deploy/ names an overlay that exists', () => {
  const files = ['README.md', ...mdUnder('docs'), ...filesUnder('deploy').filter((f) => /\.(md|ya?ml)$/.test(f))];
  const found: string[] = [];
  for (const f of files)
    for (const m of readFileSync(join(root, f), 'utf8').matchAll(/kubectl apply -k (\S+)/g))
      found.push(`${f}: ${m[1]}`);
  expect(found.length).toBeGreaterThan(0);
  for (const entry of found) {
    const path = entry.split(': ')[1].replace(/[`'").,;:]+$/, '');
    expect([
      entry,
      /^deploy\/k8s\/overlays\/[a-z-]+$/.test(path) && existsSync(join(root, path, 'kustomization.yaml')),
    ]).toEqual([entry, true]);
  }
});

function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((f) => {
    const p = `${dir}/${f}`;
    if (f === 'node_modules' || f === 'secrets') return [];
    return statSync(join(root, p)).isDirectory() ? filesUnder(p) : [p];
  });
}
const mdUnder = (dir: string) => filesUnder(dir).filter((f) => f.endsWith('.md'));
