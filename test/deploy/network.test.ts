import { callersOf } from '../../scripts/lib/topology';
import { componentOf, components, configFrom, natsComponents, yamlOf, type Component } from './support';
import { services as registryServices } from '../../scripts/lib/components';
import { overlay, overlays, settingsOf } from './k8s';

// Who can reach whom: Kubernetes NetworkPolicies admit each component's real
// callers only (the table the services' INTERNAL_CALLERS come from), and
// compose keeps the stores on a network with no way in or out. Checked on what the
// production overlay applies; the gateway's rule on every overlay (its namespace is a setting).

type K8s = Record<string, any>;
const rendered: K8s[] = overlay('production');
const policies: K8s[] = rendered.filter((d) => d.kind === 'NetworkPolicy');
const deployments: K8s[] = rendered.filter((d) => d.kind === 'Deployment');
const compose = yamlOf('docker-compose.yml');
const services = compose.services as Record<string, any>;
const podEnv = (c: Component) =>
  Object.fromEntries(
    deployments
      .find((d) => d.metadata.name === c)!
      .spec.template.spec.containers[0].env.map((e: K8s) => [e.name, String(e.value)]),
  );
const grpcPortOf = (c: Component) => configFrom(c, podEnv(c)).GRPC_PORT as number;

/** The rules of the policy that selects pods named `name`. */
const ingressOf = (name: string): K8s[] => {
  const p = policies.find((x) => x.spec.podSelector.matchLabels?.['app.kubernetes.io/name'] === name);
  expect([name, p?.spec.policyTypes]).toEqual([name, ['Ingress']]);
  return p!.spec.ingress;
};
const podNames = (rule: K8s) =>
  rule.from
    .map((f: K8s) => f.podSelector?.matchLabels['app.kubernetes.io/name'])
    .filter(Boolean)
    .sort();
const ports = (rule: K8s) => rule.ports.map((p: K8s) => p.port);

describe('Kubernetes NetworkPolicies', () => {
  it('deny all ingress to every pod of the system unless a policy admits it', () => {
    const deny = policies.find((p) => p.metadata.name === 'licensing-default-deny')!;
    expect(deny.spec).toEqual({
      podSelector: { matchLabels: { 'app.kubernetes.io/part-of': 'licensing' } },
      policyTypes: ['Ingress'],
    });
    for (const d of deployments) expect(d.spec.template.metadata.labels['app.kubernetes.io/part-of']).toBe('licensing');
  });

  it.each(Object.keys(callersOf) as (keyof typeof callersOf)[])(
    '%s: its gRPC port admits exactly its callers; metrics only from monitoring',
    (svc) => {
      const rules = ingressOf(svc);
      const grpc = rules.filter((r) => ports(r).includes(grpcPortOf(svc)));
      expect(grpc).toHaveLength(1);
      const expected = callersOf[svc].map((c) => (c === 'operator' ? 'licensing-operator' : c)).sort();
      expect(podNames(grpc[0])).toEqual(expected);
      expect(ports(grpc[0])).toEqual([grpcPortOf(svc)]);
      const metrics = rules.find((r) => ports(r).includes(configFrom(svc, podEnv(svc)).METRICS_PORT as number))!;
      expect(metrics.from).toEqual([
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
      ]);
      // Nothing else but a web page (deployPorts.http), which only the gateway reaches (it proxies it).
      const page = componentOf(svc).deployPorts.http;
      const others = rules.filter((x) => x !== grpc[0] && x !== metrics);
      expect(others.map((r) => [podNames(r), ports(r)])).toEqual(page === undefined ? [] : [[['gateway'], [page]]]);
    },
  );

  it.each(overlays)(
    "%s: the gateway admits only the Ingress controller (the overlay's ingressNamespace) on its HTTP port, and monitoring on metrics",
    (name) => {
      const gateway = overlay(name).find((d) => d.kind === 'NetworkPolicy' && d.metadata.name === 'gateway')!;
      const rules: K8s[] = gateway.spec.ingress;
      const http = Number(podEnv('gateway').PORT);
      expect(rules.find((r) => ports(r).includes(http))!.from).toEqual([
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': settingsOf(name).ingressNamespace } } },
      ]);
      expect(rules).toHaveLength(2);
    },
  );

  it('the stores admit only their users: Redis only the gateway and the web component, MongoDB only the services, its init Job and the migrations Job', () => {
    expect(podNames(ingressOf('redis')[0])).toEqual(['gateway', 'web']);
    expect(podNames(ingressOf('mongodb')[0])).toEqual(
      [...registryServices.map((x) => x.name), 'mongo-users', 'licensing-migrate'].sort(),
    );
    // NATS: the components and the Job that sets up the event stream, on the client port; the cluster's
    // routes (components/nats) only from its other nodes. Nothing else.
    const nats = ingressOf('nats');
    expect(podNames(nats[0])).toEqual([...natsComponents, 'events-setup'].sort());
    expect(ports(nats[0])).toEqual([4222]);
    expect(nats.slice(1).map((r) => [podNames(r), ports(r)])).toEqual([[['nats'], [6222]]]);
    const sts = rendered.find((d) => d.kind === 'StatefulSet' && d.metadata.name === 'nats')!;
    const containerPorts = sts.spec.template.spec.containers[0].ports.map((p: K8s) => [p.name, p.containerPort]);
    expect(containerPorts).toEqual(
      expect.arrayContaining([
        ['client', 4222],
        ['cluster', 6222],
      ]),
    );
  });
});

describe('compose networks', () => {
  const networksOf = (name: string) => [...(services[name].networks ?? [])].sort();

  it('the internal network has no way out, and the stores are only on it', () => {
    expect(compose.networks.internal).toEqual({ internal: true });
    for (const store of ['mongodb', 'nats', 'redis']) {
      expect([store, networksOf(store)]).toEqual([store, ['internal']]);
      expect(services[store].ports).toBeUndefined();
    }
  });

  it('only the gateway publishes a port; only the components components.json puts there are on the public network', () => {
    for (const c of components)
      expect([c, networksOf(c)]).toEqual([c, componentOf(c).publicNetwork ? ['internal', 'public'] : ['internal']]);
    expect(Object.keys(services).filter((s) => services[s].ports)).toEqual(['gateway']);
  });
});
