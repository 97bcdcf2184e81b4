import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

// A small kustomize (`kubectl apply -k`) for the deploy tests, which have no kustomize binary: the
// features deploy/k8s uses, in kustomize's order (resources, then components, then the kustomization's
// own patches, namespace, labels, images and replacements; local-config objects dropped at the end).
// Anything else in a kustomization fails the render instead of being ignored, so a manifest change
// that needs more of kustomize shows up here, not on a cluster.

export type K8sObject = Record<string, any>;

const known = new Set([
  'apiVersion',
  'kind',
  'resources',
  'components',
  'namespace',
  'labels',
  'images',
  'patches',
  'replacements',
]);

/** Renders the kustomization (or component) in `dir`, as `kubectl kustomize dir` would. */
export function render(dir: string): K8sObject[] {
  const out = build(resolve(dir), []);
  return out.filter((o) => o.metadata?.annotations?.['config.kubernetes.io/local-config'] !== 'true');
}

/** What a kustomization (or component) in `dir` says, checked for fields this renderer does not know. */
export function kustomizationOf(dir: string): K8sObject {
  const file = join(dir, 'kustomization.yaml');
  if (!existsSync(file)) throw new Error(`${dir}: no kustomization.yaml`);
  const k = parse(readFileSync(file, 'utf8')) as K8sObject;
  for (const key of Object.keys(k)) if (!known.has(key)) throw new Error(`${file}: "${key}" is not supported here`);
  return k;
}

function build(dir: string, inherited: K8sObject[]): K8sObject[] {
  const k = kustomizationOf(dir);
  const isComponent = k.kind === 'Component';
  let objs: K8sObject[] = isComponent ? inherited : [];
  for (const r of k.resources ?? []) {
    const path = join(dir, r);
    if (!isComponent && !path.startsWith(dir) && !statSync(path).isDirectory())
      throw new Error(`${dir}: ${r} lies outside the kustomization (kustomize refuses such a file)`);
    const added = statSync(path).isDirectory()
      ? build(path, [])
      : parseAllDocuments(readFileSync(path, 'utf8'))
          .map((d) => d.toJS() as K8sObject)
          .filter(Boolean);
    for (const o of added) {
      if (objs.some((x) => sameId(x, o))) throw new Error(`${relative(dir, path)}: ${idOf(o)} twice`);
      objs.push(o);
    }
  }
  for (const c of k.components ?? []) {
    const cdir = join(dir, c);
    if (kustomizationOf(cdir).kind !== 'Component') throw new Error(`${c} is not a Component`);
    objs = build(cdir, objs);
  }
  for (const p of k.patches ?? []) objs = applyPatch(objs, p);
  if (k.namespace) for (const o of objs) o.metadata.namespace = k.namespace;
  for (const l of k.labels ?? []) addLabels(objs, l);
  for (const i of k.images ?? []) setImage(objs, i);
  for (const r of k.replacements ?? []) replace(objs, r);
  return objs;
}

const idOf = (o: K8sObject) => `${o.kind} ${o.metadata?.name}`;
const sameId = (a: K8sObject, b: K8sObject) =>
  a.kind === b.kind && a.metadata?.name === b.metadata?.name && a.metadata?.namespace === b.metadata?.namespace;

/** kustomize's target/select: kind and name, the name a regular expression matched whole. */
function selects(sel: K8sObject, o: K8sObject): boolean {
  for (const key of Object.keys(sel))
    if (!['kind', 'name'].includes(key)) throw new Error(`selector field "${key}" is not supported here`);
  if (sel.kind !== undefined && sel.kind !== o.kind) return false;
  if (sel.name !== undefined && !new RegExp(`^(?:${sel.name})$`).test(o.metadata?.name)) return false;
  return true;
}

function applyPatch(objs: K8sObject[], p: K8sObject): K8sObject[] {
  if (p.path !== undefined) throw new Error('patches from files are not supported here; write them inline');
  const body = parse(p.patch);
  const targets = objs.filter((o) => selects(p.target ?? {}, o));
  if (targets.length === 0) throw new Error(`patch target ${JSON.stringify(p.target)} matches nothing`);
  if (Array.isArray(body)) {
    for (const t of targets) for (const op of body) json6902(t, op);
    return objs;
  }
  if (body.$patch === 'delete') return objs.filter((o) => !targets.includes(o));
  for (const t of targets) mergeInto(t, body);
  return objs;
}

/** JSON 6902 `replace` and `add` on maps and lists (the operations the overlays use). */
function json6902(o: K8sObject, op: K8sObject) {
  const path = (op.path as string)
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const last = path.pop()!;
  let node: any = o;
  for (const seg of path) {
    node = node?.[seg];
    if (node === undefined) throw new Error(`${idOf(o)}: ${op.path} does not exist`);
  }
  if (op.op === 'replace') {
    if (!(last in node)) throw new Error(`${idOf(o)}: ${op.path} does not exist (replace)`);
    node[last] = op.value;
  } else if (op.op === 'add') {
    if (Array.isArray(node)) node.splice(last === '-' ? node.length : Number(last), 0, op.value);
    else node[last] = op.value;
  } else throw new Error(`JSON 6902 op "${op.op}" is not supported here`);
}

/** Strategic merge for maps only: a list in a patch would need the merge keys, which this does not know. */
function mergeInto(into: K8sObject, patch: K8sObject) {
  for (const [k, v] of Object.entries(patch)) {
    if (Array.isArray(v)) throw new Error(`strategic-merge of the list "${k}" is not supported here`);
    if (v && typeof v === 'object' && into[k] && typeof into[k] === 'object') mergeInto(into[k], v);
    else into[k] = v;
  }
}

/** The pod templates kustomize's includeTemplates reaches. */
const templatesOf = (o: K8sObject): K8sObject[] =>
  ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job'].includes(o.kind) && o.spec?.template
    ? [o.spec.template]
    : o.kind === 'CronJob' && o.spec?.jobTemplate?.spec?.template
      ? [o.spec.jobTemplate.spec.template]
      : [];

function addLabels(objs: K8sObject[], l: K8sObject) {
  if (l.includeSelectors)
    throw new Error('labels with includeSelectors are not supported here (selectors stay stable)');
  for (const o of objs) {
    o.metadata.labels = { ...o.metadata.labels, ...l.pairs };
    if (l.includeTemplates)
      for (const t of templatesOf(o)) {
        t.metadata ??= {};
        t.metadata.labels = { ...t.metadata.labels, ...l.pairs };
      }
  }
}

function setImage(objs: K8sObject[], i: K8sObject) {
  for (const o of objs)
    for (const t of templatesOf(o))
      for (const c of [...(t.spec.initContainers ?? []), ...t.spec.containers]) {
        const [name, tag] = splitImage(c.image);
        if (name !== i.name) continue;
        c.image = `${i.newName ?? name}:${i.newTag ?? tag}`;
      }
}

const splitImage = (image: string): [string, string | undefined] => {
  const at = image.lastIndexOf(':');
  return at > image.lastIndexOf('/') ? [image.slice(0, at), image.slice(at + 1)] : [image, undefined];
};

/**
 * kustomize's field paths: dot-separated, `[k=v]` picks the list item whose field k is v, `[a.b]` is a
 * key with dots, a number indexes a list.
 */
function segmentsOf(fieldPath: string): string[] {
  return fieldPath.match(/\[[^\]]*\]|[^.[\]]+/g)!;
}

function walk(o: K8sObject, fieldPath: string): { parent: any; key: string | number } {
  const segs = segmentsOf(fieldPath);
  let node: any = o;
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i];
    let key: string | number;
    const pick = /^\[([^=\]]+)=([^\]]*)\]$/.exec(seg);
    if (pick) {
      if (!Array.isArray(node)) throw new Error(`${idOf(o)}: ${fieldPath}: ${seg} on a non-list`);
      key = node.findIndex((x: any) => String(x?.[pick[1]]) === pick[2]);
      if (key < 0) throw new Error(`${idOf(o)}: ${fieldPath}: no item ${seg}`);
    } else if (/^\d+$/.test(seg) && Array.isArray(node)) key = Number(seg);
    else key = seg.replace(/^\[(.*)\]$/, '$1');
    if (i === segs.length - 1) return { parent: node, key };
    node = node?.[key];
    if (node === undefined || node === null) throw new Error(`${idOf(o)}: ${fieldPath} does not exist`);
  }
  throw new Error(`empty field path in ${idOf(o)}`);
}

function replace(objs: K8sObject[], r: K8sObject) {
  const sources = objs.filter((o) => selects({ kind: r.source.kind, name: r.source.name }, o));
  if (sources.length !== 1)
    throw new Error(`replacement source ${r.source.kind} ${r.source.name}: ${sources.length} found`);
  const src = walk(sources[0], r.source.fieldPath);
  const value = src.parent[src.key];
  if (value === undefined) throw new Error(`replacement source ${r.source.name} has no ${r.source.fieldPath}`);
  for (const t of r.targets) {
    for (const o of objs.filter((x) => selects(t.select, x)))
      for (const fp of t.fieldPaths) {
        const { parent, key } = walk(o, fp);
        if (parent[key] === undefined) throw new Error(`${idOf(o)}: ${fp} does not exist (replacement target)`);
        const opts = t.options ?? {};
        if (opts.delimiter !== undefined) {
          const parts = String(parent[key]).split(opts.delimiter);
          parts[opts.index ?? 0] = value;
          parent[key] = parts.join(opts.delimiter);
        } else parent[key] = value;
      }
  }
}
