import Ajv2020 from 'ajv/dist/2020';
import fc from 'fast-check';
import { errorCodes } from '@licensing/runtime';
import { client, startStack, type Stack } from '../support/stack';
import { WebhookReceiver } from '../support/webhook-receiver';
import {
  describe as show,
  operationsOf,
  requestFor,
  send,
  type FuzzRequest,
  type FuzzResponse,
  type Known,
  type Operation,
} from '../support/fuzz';

// Property-based fuzzing of the public surface, driven by the /openapi.json
// the gateway serves: at least 2,000 hostile requests spread over every
// operation (and the dashboard), each answered with a documented status and a
// problem+json body (HTML pages: a proper 4xx page), never 5xx, never a stack
// trace, never a secret. Seeded: FUZZ_SEED=<n> replays a run, FUZZ_RUNS=<n>
// changes its size. A failure prints the request that caused it.

const SEED = Number(process.env.FUZZ_SEED ?? 20_241_114);
const RUNS = Number(process.env.FUZZ_RUNS ?? 2400);

let stack: Stack;
let receiver: WebhookReceiver;
let ops: Operation[];
const known: Known = { apiKeys: [], ids: [], licenseKeys: [] };
const secrets: string[] = [];
let problemSchema: (v: unknown) => boolean;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  stack = await startStack({}, { AUTH_FAILURES_PER_MINUTE: '1000000', CHECKOUT_REQUESTS_PER_MINUTE: '1000000' });
  for (const owner of ['mine', 'theirs']) {
    const acct = await stack.newAccount();
    await stack.admin.updateAccount({ id: acct.accountId, per_minute_limit: 1_000_000, per_hour_limit: 1_000_000 });
    const api = client(stack.url, acct.apiKey);
    const product = (
      await api('POST', '/api/v1/products', {
        name: `Fuzzed ${owner}`,
        price: { amount: 900, currency: 'eur' },
        policy: { max_activations: 3, duration_days: 30 },
      })
    ).body;
    const license = (
      await api('POST', '/api/v1/licenses', { product_id: product.id, customer_email: 'buyer@example.com' })
    ).body;
    const activation = (
      await api('POST', `/api/v1/licenses/${license.license_key}/activations`, { fingerprint: 'machine-1' })
    ).body;
    const session = (
      await api('POST', '/api/v1/checkout', { product_id: product.id, success_url: 'https://vendor.example/thanks' })
    ).body;
    const hook = (await api('POST', '/api/v1/webhooks', { url: `${receiver.url}/fuzz`, events: ['webhook.test'] }))
      .body;
    const delivery = (await api('POST', `/api/v1/webhooks/${hook.id}/test`)).body;
    known.ids.push(product.id, license.license.id, activation.id, session.id, hook.id, delivery.id);
    known.licenseKeys.push(license.license_key);
    secrets.push(acct.apiKey, hook.secret);
    if (owner === 'mine') {
      known.apiKeys.push(acct.apiKey);
      const validateKey = await stack.admin.createApiKey({
        account_id: acct.accountId,
        scope: 'validate',
        name: 'fuzz',
        actor: 'fuzz',
      });
      known.apiKeys.push(validateKey.secret);
      secrets.push(validateKey.secret);
    }
  }
  secrets.push(stack.topology.internalToken, stack.topology.apiKeyPepper, stack.topology.webhookSecretKey);
  const served = await (await fetch(`${stack.url}/openapi.json`)).json();
  ops = operationsOf(served);
  const ajv = new Ajv2020({ strict: false });
  problemSchema = ajv.compile(served.components.schemas.Problem);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
});

const API_STATUSES = new Set([400, 401, 403, 404, 405, 409, 413, 415, 422, 429]);
const PAGE_STATUSES = new Set([400, 403, 404, 405, 409, 410, 413, 415, 429]);
const STACK_TRACE = /\bat [\w.<>]+ \(|node_modules|\.ts:\d+|\.js:\d+|URIError|TypeError|SyntaxError: Unexpected/;

/** What is wrong with this answer, or null. */
function problemWith(op: Operation, req: FuzzRequest, res: FuzzResponse): string | null {
  if (res.status >= 500) return `status ${res.status}`;
  if (STACK_TRACE.test(res.text)) return 'a stack trace or internal error name in the body';
  const sentToken = /^Bearer (\S{12,})/.exec(req.headers.authorization ?? '')?.[1];
  for (const s of [...secrets, ...(sentToken ? [sentToken] : [])])
    if (res.text.includes(s)) return 'a secret echoed back';
  const path = req.path.startsWith('/v1') ? `/api${req.path}` : req.path;
  const page = path.startsWith('/checkout') || path.startsWith('/dashboard');
  if (res.status < 400) {
    if (page || req.method === 'HEAD' || req.method === 'OPTIONS') return null;
    if (!ops.some((o) => o.template === op.template && o.method === req.method))
      return `${req.method} on ${op.template} (not documented) answered ${res.status}`;
    return null; // the success bodies are checked against the document by every other e2e test
  }
  if (page) {
    if (!PAGE_STATUSES.has(res.status)) return `page status ${res.status} is not a documented 4xx`;
    if (!res.contentType.startsWith('text/html')) return `page error as ${res.contentType}, not an HTML page`;
    if (req.method !== 'HEAD' && !/<title>[^<]+<\/title>/.test(res.text))
      return 'page error without a titled HTML page';
    return null;
  }
  if (!API_STATUSES.has(res.status)) return `status ${res.status} is not a documented error status`;
  if (req.method === 'HEAD') return null;
  if (!res.contentType.startsWith('application/problem+json')) return `error as "${res.contentType}", not problem+json`;
  let body: any;
  try {
    body = JSON.parse(res.text);
  } catch {
    return 'problem+json that is not JSON';
  }
  if (!problemSchema(body)) return 'problem body does not match the Problem schema';
  if (body.status !== res.status) return `problem status ${body.status} ≠ HTTP ${res.status}`;
  if (!(errorCodes as readonly string[]).includes(body.code)) return `unknown code ${body.code}`;
  return null;
}

// The dashboard is not in the API document; its pages read cookies and forms.
const dashboardOps: Operation[] = [
  { method: 'GET', template: '/dashboard/signin', operationId: 'signInPage', params: [], html: true },
  { method: 'POST', template: '/dashboard/signin', operationId: 'signIn', params: [], html: true },
  {
    method: 'GET',
    template: '/dashboard/settings/keys/{id}/revoke',
    operationId: 'revokeKeyPage',
    params: [{ in: 'path', name: 'id' }],
    html: true,
  },
  {
    method: 'GET',
    template: '/dashboard/{id}',
    operationId: 'dashboardPage',
    params: [{ in: 'path', name: 'id' }],
    html: true,
  },
  {
    method: 'POST',
    template: '/checkout/{id}/pay',
    operationId: 'payPage',
    params: [{ in: 'path', name: 'id' }],
    html: true,
  },
];

it(`${RUNS} hostile requests over every operation of /openapi.json: no 5xx, only documented problem+json or 4xx pages, no stack traces, no secrets`, async () => {
  const targets = [...ops, ...dashboardOps];
  expect(ops.length).toBeGreaterThanOrEqual(30);
  const seen = new Map<string, number>();
  const statuses = new Map<number, number>();
  const survey: string[] = [];
  // Each operation equally often: a run of RUNS requests covers every one of them.
  const arbitrary = fc
    .nat(targets.length - 1)
    .chain((i) => requestFor(targets[i], known).map((req) => ({ op: targets[i], req })));
  await fc.assert(
    fc.asyncProperty(arbitrary, async ({ op, req }) => {
      const res = await send(stack.url, req);
      seen.set(req.op, (seen.get(req.op) ?? 0) + 1);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const wrong = problemWith(op, req, res);
      if (wrong && process.env.FUZZ_SURVEY)
        survey.push(
          `${wrong.split('\n')[0]} | ${req.op} | ${req.method} ${req.path.slice(0, 80)} | ${JSON.stringify(req.headers).slice(0, 150)} | ${res.text.slice(0, 120).replace(/\n/g, ' ')}`,
        );
      else if (wrong) throw new Error(`${wrong}\n${show(req, res)}`);
    }),
    { seed: SEED, numRuns: RUNS, endOnFailure: true, verbose: 1 },
  );
  // FUZZ_SURVEY=1: every failing request of the run, one line each, instead of stopping at the first.
  if (process.env.FUZZ_SURVEY) {
    require('node:fs').writeFileSync(process.env.FUZZ_SURVEY_FILE ?? 'fuzz-survey.txt', survey.join('\n'));
    expect(survey).toEqual([]);
  }
  const total = [...seen.values()].reduce((a, b) => a + b, 0);
  expect(total).toBe(RUNS);
  const missed = targets
    .filter((op) => !seen.get(`${op.method} ${op.template}`))
    .map((op) => `${op.method} ${op.template}`);
  expect(missed).toEqual([]);
  // Not all refusals: enough requests got through to the handlers.
  expect((statuses.get(200) ?? 0) + (statuses.get(201) ?? 0)).toBeGreaterThan(RUNS / 20);
}, 300_000);
