import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { type K8sObject, render } from './kustomize';
import { root, yamlOf } from './support';

// The Kubernetes deployments as the deploy tests see them: every overlay rendered, and the offline
// schema check of test/deploy/validate-k8s.mjs.

export type { K8sObject };
export const k8sDir = join(root, 'deploy/k8s');
/** Every overlay under deploy/k8s/overlays, by directory name. */
export const overlays = readdirSync(join(k8sDir, 'overlays')).sort();
const rendered = new Map<string, K8sObject[]>();
/** The objects `kubectl apply -k deploy/k8s/overlays/<name>` applies (rendered once per test file). */
export function overlay(name: string): K8sObject[] {
  if (!rendered.has(name)) rendered.set(name, render(join(k8sDir, 'overlays', name)));
  return structuredClone(rendered.get(name)!);
}
/** An overlay's settings (overlays/<name>/settings.yaml, the ConfigMap components/settings reads). */
export const settingsOf = (name: string): Record<string, string> =>
  yamlOf(`deploy/k8s/overlays/${name}/settings.yaml`).data;

export interface SchemaResult {
  id: string;
  errors: string[];
  unknown: string[];
}
/** Each object checked against its kind's schema, unknown fields reported (validate-k8s.mjs). */
export function validateAgainstSchemas(objs: K8sObject[]): SchemaResult[] {
  const out = execFileSync(process.execPath, [join(__dirname, 'validate-k8s.mjs')], {
    input: JSON.stringify(objs),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(out);
}

export const find = (objs: K8sObject[], kind: string, name: string) =>
  objs.find((d) => d.kind === kind && d.metadata.name === name);
