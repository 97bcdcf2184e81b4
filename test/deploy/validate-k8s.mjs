// Validates Kubernetes objects against the API's schemas, offline: reads a JSON array of objects on
// stdin, writes one line of JSON: [{ id, errors, unknown }] in the same order. The schemas are the
// validators that kubernetes-models (the core API), @kubernetes-models/prometheus-operator
// (ServiceMonitor, PrometheusRule) and @kubernetes-models/gateway-api (HTTPRoute) generate from the OpenAPI specs and
// CRDs. They are ES modules only, which jest's CommonJS runtime cannot load, so the deploy tests run
// this file with node (test/deploy/k8s.ts).
//
// Those validators accept fields the schema does not know (the API server drops them with a warning,
// or refuses them under kubectl's --validate=strict). To catch those too, the object is validated
// through a Proxy that records which keys the validator reads: a validator reads every property its
// schema defines (absent or not), and walks every key of a map (labels, ConfigMap data). A key of a
// non-map object that it never read is one the schema does not have: an unknown field.

const modules = {
  v1: 'kubernetes-models/v1',
  'apps/v1': 'kubernetes-models/apps/v1',
  'batch/v1': 'kubernetes-models/batch/v1',
  'autoscaling/v2': 'kubernetes-models/autoscaling/v2',
  'policy/v1': 'kubernetes-models/policy/v1',
  'networking.k8s.io/v1': 'kubernetes-models/networking.k8s.io/v1',
  'monitoring.coreos.com/v1': '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1',
  'gateway.networking.k8s.io/v1': '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1',
};

function tracked(value, path, records) {
  if (value === null || typeof value !== 'object') return value;
  const record = { path, value, read: new Set(), enumerated: false };
  records.push(record);
  const children = new Map();
  return new Proxy(value, {
    get(target, key, receiver) {
      if (typeof key !== 'string' || !Object.hasOwn(target, key)) return Reflect.get(target, key, receiver);
      record.read.add(key);
      if (!children.has(key)) children.set(key, tracked(target[key], `${path}/${key}`, records));
      return children.get(key);
    },
    ownKeys(target) {
      record.enumerated = true;
      return Reflect.ownKeys(target);
    },
  });
}

async function check(obj) {
  const id = `${obj?.apiVersion} ${obj?.kind} ${obj?.metadata?.name}`;
  const module = modules[obj?.apiVersion];
  const Model = module && (await import(module))[obj.kind];
  if (!Model) return { id, errors: [`no schema for ${obj?.apiVersion} ${obj?.kind}`], unknown: [] };
  const records = [];
  const errors = [];
  try {
    // The model's own validate function, called on the tracked object (a model instance would copy it).
    Model.prototype.validate.call(tracked(obj, '', records));
  } catch (err) {
    errors.push(err.message);
  }
  const unknown = records
    .filter((r) => !Array.isArray(r.value) && !r.enumerated)
    .flatMap((r) =>
      Object.keys(r.value)
        .filter((k) => !r.read.has(k))
        .map((k) => `${r.path}/${k}`),
    );
  return { id, errors, unknown };
}

let input = '';
for await (const chunk of process.stdin) input += chunk;
const results = [];
for (const obj of JSON.parse(input)) results.push(await check(obj));
process.stdout.write(`${JSON.stringify(results)}\n`);
