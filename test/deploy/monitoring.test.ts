import { yamlDocsOf } from './support';
import { type K8sObject, overlay, validateAgainstSchemas } from './k8s';

// The monitoring objects applied to a cluster, checked against their CRDs' schemas offline
// (test/deploy/validate-k8s.mjs, @kubernetes-models/prometheus-operator), unknown fields included:
// deploy/monitoring/prometheus-rule.yaml (applied on its own, in no overlay) and the overlays'
// ServiceMonitor. test/repository/monitoring.test.ts checks what the rules say (their expressions, the
// metrics they read, the same rules as alerts.rules.yaml).

const [rule, ...others] = yamlDocsOf('deploy/monitoring/prometheus-rule.yaml') as K8sObject[];

it('deploy/monitoring/prometheus-rule.yaml is one PrometheusRule, valid against its schema, with no field it does not know', () => {
  expect(others).toEqual([]);
  expect([rule.apiVersion, rule.kind]).toEqual(['monitoring.coreos.com/v1', 'PrometheusRule']);
  expect(rule.spec.groups.flatMap((g: K8sObject) => g.rules).length).toBeGreaterThan(10);
  expect(validateAgainstSchemas([rule])).toEqual([
    { id: 'monitoring.coreos.com/v1 PrometheusRule licensing-alerts', errors: [], unknown: [] },
  ]);
});

it('the check catches a misspelt or mistyped field of a rule (it would not pass anything)', () => {
  const misspelt = structuredClone(rule);
  misspelt.spec.groups[0].rules[0].fore = misspelt.spec.groups[0].rules[0].for; // a typo of `for`
  misspelt.spec.groups[1].intervall = '1m';
  const mistyped = structuredClone(rule);
  mistyped.spec.groups[0].rules[0].labels = ['severity'];
  const nameless = structuredClone(rule);
  delete nameless.spec.groups[0].name;
  const [a, b, c] = validateAgainstSchemas([misspelt, mistyped, nameless]);
  expect(a.unknown).toEqual(['/spec/groups/0/rules/0/fore', '/spec/groups/1/intervall']);
  expect(b.errors.join()).toMatch(/labels/);
  expect(c.errors.join()).toMatch(/name/);
});

it.each(['development', 'production'])(
  '%s: the ServiceMonitor is valid against its schema, and a misspelt endpoint field is caught',
  (name) => {
    const monitors = overlay(name).filter((o) => o.kind === 'ServiceMonitor');
    expect(monitors).toHaveLength(1);
    const typo = structuredClone(monitors[0]);
    typo.spec.endpoints[0].intervall = '30s';
    const [ok, broken] = validateAgainstSchemas([monitors[0], typo]);
    expect(ok).toMatchObject({ errors: [], unknown: [] });
    expect(broken.unknown).toEqual(['/spec/endpoints/0/intervall']);
  },
);
