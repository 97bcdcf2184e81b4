import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import fc from 'fast-check';
import { errorCodes } from '@licensing/runtime';
import { eventually } from '../support/eventually';
import { client, startStack, type Stack } from '../support/stack';
import { WebhookReceiver } from '../support/webhook-receiver';
import { WebClient } from '../support/web-client';
import {
  CONTROL_CHARACTERS,
  LINE_BREAKS,
  describe as show,
  fileBodyFor,
  operationsOf,
  requestFor,
  send,
  textSlotsOf,
  type FuzzRequest,
  type FuzzResponse,
  type Known,
  type Operation,
} from '../support/fuzz';

// Own stack: its auth-failure and checkout-page throttles are lifted, so hostile requests meet the routes,
// not a 429.

// Property-based fuzzing of the public surface, driven by the /openapi.json
// the gateway serves: at least 2,000 hostile requests spread over every
// operation (and the dashboard's, the hosted checkout's and the customer portal's pages, the
// portal's signed in as a customer), each answered with a documented status and a
// problem+json body (HTML pages: a proper 4xx page), never 5xx, never a stack
// trace, never a secret. Seeded: FUZZ_SEED=<n> replays a run, FUZZ_RUNS=<n>
// changes its size. A failure prints the request that caused it.

const SEED = Number(process.env.FUZZ_SEED ?? 20_241_114);
const RUNS = Number(process.env.FUZZ_RUNS ?? 2400);
/** Files sent to POST /api/v1/imports on their own (each accepted one is then followed to its end). */
const IMPORT_RUNS = Number(process.env.FUZZ_IMPORT_RUNS ?? 150);

let stack: Stack;
let receiver: WebhookReceiver;
let ops: Operation[];
let ownerOnly: Operation[];
const known: Known = { apiKeys: [], ids: [], licenseKeys: [], cookies: [], formValues: [] };
/** Real values of the first account's own things, by the path parameter that names them. */
const mine: Record<string, string> = {};
let fullKey = '';
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
    // A subscription (a monthly product bought on the hosted page in test mode).
    const monthly = (
      await api('POST', '/api/v1/products', {
        name: `Fuzzed monthly ${owner}`,
        price: { amount: 500, currency: 'eur', interval: 'month' },
      })
    ).body;
    const recurring = (
      await api('POST', '/api/v1/checkout', { product_id: monthly.id, success_url: 'https://vendor.example/thanks' })
    ).body;
    const web = new WebClient(stack.url, stack.topology);
    const page = await web.get(`/checkout/${recurring.id}`);
    await web.post(`/checkout/${recurring.id}/pay`, {
      _csrf: WebClient.csrf(page.html),
      email: 'subscriber@example.com',
      card: '4242424242424242',
    });
    const subscription = (await api('GET', `/api/v1/checkout/${recurring.id}`)).body.subscription_id as string;
    known.ids.push(
      acct.accountId,
      product.id,
      license.license.id,
      activation.id,
      session.id,
      hook.id,
      delivery.id,
      subscription,
    );
    known.licenseKeys.push(license.license_key);
    // A suspended licence too: its License credential only validates (401 elsewhere).
    const suspended = (
      await api('POST', '/api/v1/licenses', { product_id: product.id, customer_email: 'gone@example.com' })
    ).body.license_key;
    await api('POST', `/api/v1/licenses/${suspended}/suspend`);
    known.licenseKeys.push(suspended);
    secrets.push(acct.apiKey, hook.secret);
    if (owner === 'mine') {
      Object.assign(mine, {
        account: acct.accountId,
        product: product.id,
        key: license.license_key,
        activation: activation.id,
        session: session.id,
        subscription,
        endpoint: hook.id,
        delivery: delivery.id,
      });
      fullKey = acct.apiKey;
      known.apiKeys.push(acct.apiKey);
      const validateKey = await stack.admin.createApiKey({
        account_id: acct.accountId,
        scope: 'validate',
        name: 'fuzz',
        actor: 'fuzz',
      });
      known.apiKeys.push(validateKey.secret);
      secrets.push(validateKey.secret);
      await signInToPortal(acct.accountId, 'buyer@example.com');
    }
  }
  secrets.push(stack.topology.internalToken, stack.topology.apiKeyPepper, stack.topology.webhookSecretKey);
  const served = await (await fetch(`${stack.url}/openapi.json`)).json();
  // What no API key may call (the owner's: ownership handed over) is refused by role before its request is
  // read, so its inputs cannot be fuzzed with a key: each answers 403 (checked below), the rest are fuzzed.
  const all = operationsOf(served);
  ownerOnly = all.filter((o) => o.requiredRole === 'owner');
  ops = all.filter((o) => o.requiredRole !== 'owner');
  const ajv = new Ajv2020({ strict: false });
  problemSchema = ajv.compile(served.components.schemas.Problem);
}, 60_000);

/**
 * Signs the licence's customer in to the account's portal (the link from the mail folder the stack
 * writes to) and keeps the cookies and CSRF tokens, so fuzzed portal requests reach the signed-in pages.
 */
async function signInToPortal(accountId: string, email: string): Promise<void> {
  const web = new WebClient(stack.url);
  const form = await web.get(`/portal/${accountId}`);
  expect(form.status).toBe(200);
  const signInCsrf = WebClient.csrf(form.html);
  expect((await web.post(`/portal/${accountId}/sign-in`, { _csrf: signInCsrf, email })).status).toBe(200);
  const folder = new URL(stack.topology.mailUrl!).pathname;
  const link = await eventually(
    () => {
      for (const file of readdirSync(folder).filter((f) => f.endsWith('.json'))) {
        const mail = JSON.parse(readFileSync(join(folder, file), 'utf8')) as { to: string; text: string };
        const found = mail.to === email && /\/portal\/acct_\w+\/link\?token=([\w-]{43})/.exec(mail.text);
        if (found) return found[1];
      }
      throw new Error(`no sign-in mail to ${email} in ${folder} yet`);
    },
    { timeoutMs: 20_000, intervalMs: 100 },
  );
  const confirm = await web.get(`/portal/${accountId}/link?token=${link}`);
  const redeemed = await web.post(`/portal/${accountId}/link`, { _csrf: WebClient.csrf(confirm.html), token: link });
  expect(redeemed.status).toBe(303);
  const home = await web.get(`/portal/${accountId}`);
  expect(home.html).toContain('buyer@example.com');
  const sessionCsrf = WebClient.csrf(home.html);
  known.cookies!.push([...web.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
  known.formValues!.push(sessionCsrf, signInCsrf, email);
  secrets.push(web.cookies.get('lk_portal')!);
}

afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
});

const API_STATUSES = new Set([400, 401, 403, 404, 405, 409, 413, 415, 422, 429]);
// 402: a card the hosted checkout or billing page refuses.
const PAGE_STATUSES = new Set([400, 402, 403, 404, 405, 409, 410, 413, 415, 429]);
const STACK_TRACE = /\bat [\w.<>]+ \(|node_modules|\.ts:\d+|\.js:\d+|URIError|TypeError|SyntaxError: Unexpected/;

/** What is wrong with this answer, or null. */
function problemWith(op: Operation, req: FuzzRequest, res: FuzzResponse): string | null {
  if (res.status >= 500) return `status ${res.status}`;
  if (STACK_TRACE.test(res.text)) return 'a stack trace or internal error name in the body';
  const sentToken = /^Bearer (\S{12,})/.exec(req.headers.authorization ?? '')?.[1];
  for (const s of [...secrets, ...(sentToken ? [sentToken] : [])])
    if (res.text.includes(s)) return 'a secret echoed back';
  const path = req.path.startsWith('/v1') ? `/api${req.path}` : req.path;
  const page = path.startsWith('/checkout') || path.startsWith('/dashboard') || path.startsWith('/portal');
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
  // The test-mode billing page (a link of POST /api/v1/subscriptions/{id}/billing_portal) and the
  // dashboard's subscriptions: the list's filters, one subscription, its cancel form.
  ...(['GET', 'POST'] as const).map(
    (method): Operation => ({
      method,
      template: '/checkout/{id}/billing/{token}',
      operationId: `billingPage${method}`,
      params: [
        { in: 'path', name: 'id' },
        { in: 'path', name: 'token' },
      ],
      html: true,
    }),
  ),
  {
    method: 'GET',
    template: '/dashboard/subscriptions',
    operationId: 'dashboardSubscriptions',
    params: ['status', 'product_id', 'customer_email', 'starting_after'].map((name) => ({ in: 'query', name })),
    html: true,
  },
  {
    method: 'GET',
    template: '/dashboard/subscriptions/{id}',
    operationId: 'dashboardSubscription',
    params: [{ in: 'path', name: 'id' }],
    html: true,
  },
  {
    method: 'POST',
    template: '/dashboard/subscriptions/{id}/cancel',
    operationId: 'dashboardCancelSubscription',
    params: [
      { in: 'path', name: 'id' },
      { in: 'query', name: 'at_period_end' },
    ],
    html: true,
  },
  // Before a session: a forgotten password, its mailed link, an invitation's link.
  {
    method: 'POST',
    template: '/dashboard/password/forgot',
    operationId: 'forgotPassword',
    params: [],
    html: true,
    form: ['email', '_csrf'],
  },
  {
    method: 'GET',
    template: '/dashboard/password/reset',
    operationId: 'resetPasswordPage',
    params: [{ in: 'query', name: 'token' }],
    html: true,
  },
  {
    method: 'POST',
    template: '/dashboard/password/reset',
    operationId: 'resetPassword',
    params: [],
    html: true,
    form: ['token', 'password', '_csrf'],
  },
  {
    method: 'POST',
    template: '/dashboard/invitations/accept',
    operationId: 'acceptInvitation',
    params: [],
    html: true,
    form: ['token', 'name', 'password', '_csrf'],
  },
  // Two-factor sign-in: the sign-in's code form (before a session), enrolling and turning it off, the
  // account's requirement.
  {
    method: 'POST',
    template: '/dashboard/signin/code',
    operationId: 'signInCode',
    params: [],
    html: true,
    form: ['code', '_csrf'],
  },
  {
    method: 'POST',
    template: '/dashboard/settings/mfa/confirm',
    operationId: 'dashboardMfaConfirm',
    params: [],
    html: true,
    form: ['code', 'secret', 'otpauth_uri', '_csrf'],
  },
  {
    method: 'POST',
    template: '/dashboard/settings/mfa/disable',
    operationId: 'dashboardMfaDisable',
    params: [],
    html: true,
    form: ['password', '_csrf'],
  },
  {
    method: 'POST',
    template: '/dashboard/settings/require-mfa',
    operationId: 'dashboardRequireMfa',
    params: [],
    html: true,
    form: ['require_mfa', '_csrf'],
  },
  // Signed in: the audit log's filters, a member's role form.
  {
    method: 'GET',
    template: '/dashboard/audit',
    operationId: 'dashboardAudit',
    params: ['actor_id', 'action', 'target_id', 'since', 'until', 'starting_after'].map((name) => ({
      in: 'query',
      name,
    })),
    html: true,
  },
  {
    method: 'POST',
    template: '/dashboard/members/{id}/role',
    operationId: 'dashboardMemberRole',
    params: [{ in: 'path', name: 'id' }],
    html: true,
    form: ['role', '_csrf'],
  },
];

// The customer portal's pages: the sign-in form and its POST, the one-time link, the licence
// pages, the deactivate form and the licence file, with a real session cookie part of the time, and
// mostly the signed-in customer's account, licence and machine in the path.
const portalOps = (): Operation[] => {
  const account = { in: 'path', name: 'account', real: [mine.account] };
  const key = { in: 'path', name: 'key', real: [mine.key] };
  return [
    { method: 'GET', template: '/portal/{account}', operationId: 'portalHome', params: [account], html: true },
    {
      method: 'POST',
      template: '/portal/{account}/sign-in',
      operationId: 'portalSignIn',
      params: [account],
      html: true,
      form: ['email', '_csrf'],
    },
    {
      method: 'GET',
      template: '/portal/{account}/link',
      operationId: 'portalLinkPage',
      params: [account, { in: 'query', name: 'token' }],
      html: true,
    },
    {
      method: 'POST',
      template: '/portal/{account}/link',
      operationId: 'portalRedeem',
      params: [account],
      html: true,
      form: ['token', '_csrf'],
    },
    {
      method: 'GET',
      template: '/portal/{account}/licenses/{key}',
      operationId: 'portalLicense',
      params: [account, key, { in: 'query', name: 'freed' }],
      html: true,
    },
    {
      method: 'POST',
      template: '/portal/{account}/licenses/{key}/activations/{id}/deactivate',
      operationId: 'portalDeactivate',
      params: [account, key, { in: 'path', name: 'id', real: [mine.activation] }],
      html: true,
      form: ['_csrf'],
    },
    {
      method: 'GET',
      template: '/portal/{account}/licenses/{key}/file',
      operationId: 'portalLicenseFile',
      params: [account, key],
      html: true,
    },
    // Signing out with a made-up form only: a real token would end the session the other requests use.
    {
      method: 'POST',
      template: '/portal/{account}/sign-out',
      operationId: 'portalSignOut',
      params: [account],
      html: true,
    },
  ];
};

it(`${RUNS} hostile requests over every operation of /openapi.json: no 5xx, only documented problem+json or 4xx pages, no stack traces, no secrets`, async () => {
  const targets = [...ops, ...dashboardOps, ...portalOps()];
  expect(ops.length).toBeGreaterThanOrEqual(30);
  const seen = new Map<string, number>();
  const statuses = new Map<number, number>();
  /** Portal pages answered as a signed-in customer: the fuzz got past sign-in. */
  let portalSignedIn = 0;
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
      if (req.op.startsWith('GET /portal/{account}/licenses/') && res.status === 200) portalSignedIn++;
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
  expect(portalSignedIn).toBeGreaterThan(0);
}, 300_000);

it(`${IMPORT_RUNS} hostile files to POST /api/v1/imports (JSON lines and CSV: garbage, huge lines, bad UTF-8, the wrong format for the type): 202, 400 or 415 as documented, never a 5xx or a stack trace; each accepted file ends done or failed`, async () => {
  const importOp = ops.find((o) => o.method === 'POST' && o.template === '/api/v1/imports')!;
  expect(importOp.fileTypes).toEqual(['application/x-ndjson', 'text/csv']);
  const statuses = new Map<number, number>();
  const accepted: any[] = [];
  let wideHeaders = 0;
  /** The import once it is no longer running (never stuck). */
  const ended = (id: string) =>
    eventually(
      async () => {
        const r = await call('GET', `/api/v1/imports/${id}`);
        expect(r.status).toBe(200);
        expect(r.json.status).not.toBe('running');
        return r.json;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
  const arbitrary = fc.record({
    format: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom('jsonl', 'csv', 'keygen', 'lemonsqueezy', 'gumroad') },
      { weight: 1, arbitrary: fc.constantFrom('JSONL', 'polar', '', 'jsonl&format=csv') },
    ),
    // Mostly the file's own kind of type, often the other one (a CSV file as JSON lines and back).
    type: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom('application/x-ndjson', 'text/csv') },
      { weight: 2, arbitrary: fc.constantFrom('application/x-ndjson; charset=utf-8', 'text/csv; charset=latin1') },
      { weight: 1, arbitrary: fc.constantFrom('application/json', 'text/plain', 'multipart/form-data; boundary=x') },
    ),
    encoding: fc.oneof(
      { weight: 12, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constantFrom('gzip', 'identity') },
    ),
    body: fileBodyFor(known),
  });
  await fc.assert(
    fc.asyncProperty(arbitrary, async ({ format, type, encoding, body }) => {
      const req: FuzzRequest = {
        op: 'POST /api/v1/imports',
        method: 'POST',
        path: `/api/v1/imports?format=${format}`,
        headers: {
          authorization: `Bearer ${fullKey}`,
          'content-type': type,
          ...(encoding ? { 'content-encoding': encoding } : {}),
        },
        body,
      };
      let res = await send(stack.url, req);
      // An import the first fuzz left waiting or running (one per account at a time): once it ended, again.
      const before = res.status === 409 ? /\((imp_[0-9A-Z]+)\)/.exec(res.text) : null;
      if (before) {
        await ended(before[1]);
        res = await send(stack.url, req);
      }
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 400 && /more than 256 columns/.test(res.text)) wideHeaders++;
      const wrong =
        problemWith(importOp, req, res) ??
        (![202, 400, 415].includes(res.status) ? `status ${res.status} for a file under 100 MB` : null);
      if (wrong) throw new Error(`${wrong}\n${show(req, res)}`);
      // An account runs one import at a time: the next file is sent once this one ended.
      if (res.status === 202) accepted.push(await ended(JSON.parse(res.text).id));
    }),
    { seed: SEED, numRuns: IMPORT_RUNS, endOnFailure: true },
  );
  // Files got through to the job, and files were refused as a whole for each documented reason.
  expect(statuses.get(202) ?? 0).toBeGreaterThan(IMPORT_RUNS / 10);
  expect(statuses.get(400) ?? 0).toBeGreaterThan(0);
  expect(statuses.get(415) ?? 0).toBeGreaterThan(0);
  // A header of thousands of columns was refused as a whole, as documented.
  expect(wideHeaders).toBeGreaterThan(0);
  // Each accepted file's job ends, done (its bad rows named) or failed (saying why), never stuck or internal.
  for (const job of accepted) {
    const id = job.id;
    const text = JSON.stringify(job);
    expect({ id, status: job.status, trace: STACK_TRACE.test(text), internal: /internal error/i.test(text) }).toEqual({
      id,
      status: expect.stringMatching(/^(done|failed)$/),
      trace: false,
      internal: false,
    });
    for (const e of [...job.errors, ...job.notices]) expect(e.row).toBeGreaterThanOrEqual(1);
    if (job.status === 'failed') expect(job.failure).toEqual(expect.any(String));
  }
}, 300_000);

/** The operation's path with the first account's real ids, one parameter replaced by `raw` (already encoded). */
function pathOf(template: string, replace?: { name: string; raw: string }): string {
  const real = (name: string, before: string) =>
    name === 'key'
      ? mine.key
      : name === 'delivery'
        ? mine.delivery
        : /\/licenses\/\{key\}\/activations\/$/.test(before)
          ? mine.activation
          : before.startsWith('/api/v1/products')
            ? mine.product
            : before.startsWith('/api/v1/checkout') || before.startsWith('/checkout')
              ? mine.session
              : before.startsWith('/api/v1/subscriptions')
                ? mine.subscription
                : mine.endpoint;
  return template.replace(/\{(\w+)\}/g, (_m, name: string, at: number) =>
    replace?.name === name ? replace.raw : encodeURIComponent(real(name, template.slice(0, at))),
  );
}

const apiOps = () => ops.filter((op) => op.template.startsWith('/api/v1/'));

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await send(stack.url, {
    op: `${method} ${path}`,
    method,
    path,
    headers: {
      authorization: `Bearer ${fullKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
  });
  let json: any;
  try {
    json = JSON.parse(res.text);
  } catch {
    json = undefined;
  }
  return { ...res, json };
}

it('refuses every owner-only operation to any key with 403 forbidden, whatever it sends', async () => {
  expect(ownerOnly.length).toBeGreaterThan(0);
  for (const op of ownerOnly) {
    const res = await call(op.method, op.template, { member_id: '\u0000' });
    expect([op.template, res.status, res.json?.code]).toEqual([op.template, 403, 'forbidden']);
  }
});

const fieldsOf = (json: any): string[] => (json?.errors ?? []).map((e: { field: string }) => e.field);
const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

describe('control characters, on every operation of /openapi.json', () => {
  it('in every text field of every body: 400 naming the field (line breaks only in multi-line text)', async () => {
    const failures: string[] = [];
    let tried = 0;
    for (const op of apiOps()) {
      for (const slot of textSlotsOf(op.bodySchema)) {
        const refused = [...CONTROL_CHARACTERS, ...(slot.multiline ? [] : LINE_BREAKS)];
        for (const c of refused) {
          tried++;
          const res = await call(op.method, pathOf(op.template), slot.body(`a${c}b`));
          const named = fieldsOf(res.json).some((f) =>
            slot.field.endsWith('.') ? f.startsWith(slot.field) : f === slot.field,
          );
          if (res.status !== 400 || res.json?.code !== 'invalid_request' || !named)
            failures.push(
              `${op.method} ${op.template} ${slot.field} ${codePoint(c)} → ${res.status} ${res.text.slice(0, 200)}`,
            );
        }
        if (slot.multiline)
          for (const c of LINE_BREAKS) {
            const res = await call(op.method, pathOf(op.template), slot.body(`a${c}b`));
            if (res.status >= 500 || fieldsOf(res.json).includes(slot.field))
              failures.push(
                `${op.method} ${op.template} ${slot.field} refused ${codePoint(c)}: ${res.text.slice(0, 200)}`,
              );
          }
      }
    }
    expect(failures).toEqual([]);
    // The walk found the fields (names, e-mails, URLs, nested price and list items, metadata keys and values).
    expect(tried).toBeGreaterThan(200);
  }, 120_000);

  it('in every query parameter and path parameter, also under /v1: 400 naming it', async () => {
    const failures: string[] = [];
    let tried = 0;
    for (const op of apiOps()) {
      const params = op.params.filter((p) => p.in === 'query' || p.in === 'path');
      for (const p of params)
        for (const raw of ['%00', 'a%01b', '%7F', '%C2%85', '%EF%BF%BE', ...(p.in === 'query' ? ['a%0Ab'] : [])]) {
          for (const alias of [false, true]) {
            tried++;
            let path = p.in === 'path' ? pathOf(op.template, { name: p.name, raw: `x${raw}` }) : pathOf(op.template);
            if (p.in === 'query') path += `?${p.name}=${raw}`;
            if (alias) path = path.slice(4);
            const res = await call(op.method, path, op.method === 'GET' || op.method === 'DELETE' ? undefined : {});
            if (res.status !== 400 || !fieldsOf(res.json).includes(p.name))
              failures.push(`${op.method} ${path} → ${res.status} ${res.text.slice(0, 200)}`);
          }
        }
    }
    expect(failures).toEqual([]);
    expect(tried).toBeGreaterThan(100);
  }, 120_000);

  it('in every documented header parameter: 400 naming it (HTTP itself refuses other controls in headers)', async () => {
    const withHeaders = apiOps().filter((op) => op.params.some((p) => p.in === 'header'));
    expect(withHeaders.length).toBeGreaterThanOrEqual(2);
    // Good bodies, so the header is what is refused (nothing is created).
    const bodies: Record<string, unknown> = {
      createLicense: { product_id: mine.product, customer_email: 'header@example.com' },
      createCheckoutSession: { product_id: mine.product, success_url: 'https://vendor.example/thanks' },
      createLicenseBatch: { product_id: mine.product, licenses: [{ customer_email: 'header@example.com' }] },
    };
    for (const op of withHeaders)
      for (const p of op.params.filter((x) => x.in === 'header')) {
        const res = await call(op.method, pathOf(op.template), bodies[op.operationId] ?? {}, { [p.name]: 'a\tb' });
        expect({ op: op.operationId, status: res.status, fields: fieldsOf(res.json) }).toEqual({
          op: op.operationId,
          status: 400,
          fields: expect.arrayContaining([p.name]),
        });
      }
  });

  it('in the dashboard and the hosted checkout page forms: a 400 page naming the field', async () => {
    const form = (fields: Record<string, string>) => Buffer.from(new URLSearchParams(fields).toString());
    const post = (path: string, fields: Record<string, string>) =>
      send(stack.url, {
        op: `POST ${path}`,
        method: 'POST',
        path,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form(fields),
      });
    for (const c of ['\u0000', '\u0001', '\u007f', '\n']) {
      const signIn = await post('/dashboard/signin', { email: `a${c}@example.com`, password: 'x', _csrf: 'x' });
      expect([signIn.status, signIn.contentType]).toEqual([400, expect.stringMatching(/^text\/html/)]);
      expect(signIn.text).toContain(
        `email must not contain control characters or unpaired surrogates (found ${codePoint(c)})`,
      );
      const pay = await post(`/checkout/${mine.session}/pay`, { email: `a${c}@example.com`, card: '4242', _csrf: 'x' });
      expect([pay.status, pay.contentType]).toEqual([400, expect.stringMatching(/^text\/html/)]);
      expect(pay.text).toContain(
        `email must not contain control characters or unpaired surrogates (found ${codePoint(c)})`,
      );
    }
    const search = await send(stack.url, {
      op: 'GET /dashboard/signin',
      method: 'GET',
      path: '/dashboard/signin?q=%00',
      headers: {},
    });
    expect(search.status).toBe(400);
    expect(search.text).toContain('q must not contain control characters');
    // Nothing was stored: the session has no e-mail.
    const session = await call('GET', `/api/v1/checkout/${mine.session}`);
    expect(session.json).toMatchObject({ id: mine.session, customer_email: null });
  });
});

describe('unknown query parameters', () => {
  it('every operation of /openapi.json refuses one, also under /v1: 400 naming it', async () => {
    const failures: string[] = [];
    for (const op of apiOps())
      for (const alias of [false, true]) {
        let path = `${pathOf(op.template)}?foo=1`;
        if (alias) path = path.slice(4);
        const res = await call(op.method, path, op.method === 'GET' || op.method === 'DELETE' ? undefined : {});
        if (res.status !== 400 || res.json?.code !== 'invalid_request' || !fieldsOf(res.json).includes('foo'))
          failures.push(`${op.method} ${path} → ${res.status} ${res.text.slice(0, 200)}`);
      }
    expect(failures).toEqual([]);
    expect(apiOps().length).toBeGreaterThanOrEqual(30);
  });

  it('PATCH /api/v1/products/{id}?foo=1 changes nothing', async () => {
    const before = await call('GET', `/api/v1/products/${mine.product}`);
    const res = await call('PATCH', `/api/v1/products/${mine.product}?foo=1`, { name: 'Renamed by a typo' });
    expect([res.status, res.json.errors]).toEqual([400, [{ field: 'foo', message: 'unknown query parameter "foo"' }]]);
    expect((await call('GET', `/api/v1/products/${mine.product}`)).json.name).toBe(before.json.name);
  });
});

describe('the test-mode billing page and the dashboard’s subscriptions, signed in, with a real link', () => {
  // The property above sends these routes no session and rarely a live billing link: here each of their
  // parameters and fields gets hostile values over a real one, signed in. Each answer is a 200 or a
  // titled 4xx HTML page, never a 5xx or a stack trace; the subscription changes only when asked right.
  const HOSTILE = [
    '',
    'x',
    '%00',
    'a%01b',
    '%7F',
    '%C2%85',
    '%ED%A0%80',
    '%E2%82',
    '%',
    '%zz',
    '..',
    '%2e%2e',
    '__proto__',
    'sub_nope',
    'cs_nope',
    'prod_nope',
    `sub_${'0'.repeat(26)}`,
    'x'.repeat(5000),
    '%F0%9F%98%80',
    '<script>alert(1)</script>',
    'true',
    'false',
    'active',
  ];
  let web: WebClient;
  let sub: { id: string; session: string };
  let billing: string;

  beforeAll(async () => {
    web = new WebClient(stack.url, stack.topology);
    await web.signUp(`fuzz-owner-${Date.now().toString(36)}@example.com`);
    const settings = (await web.get('/dashboard/settings')).html;
    const accountId = /data-testid="account-id">(acct_[^<]+)</.exec(settings)![1];
    await stack.admin.updateAccount({ id: accountId, per_minute_limit: 1_000_000, per_hour_limit: 1_000_000 });
    await eventually(async () =>
      expect((await web.get('/dashboard/settings')).html).toContain('data-testid="hourly-quota">1,000,000<'),
    );
    const csrf = WebClient.csrf(settings);
    const made = await web.post('/dashboard/settings/keys', { _csrf: csrf, name: 'api', scope: 'full' });
    const key = /data-testid="new-key">([^<]+)</.exec(made.html)![1];
    secrets.push(key);
    const api = client(stack.url, key);
    const product = (
      await api('POST', '/api/v1/products', {
        name: 'Fuzzed dashboard monthly',
        price: { amount: 700, currency: 'eur', interval: 'month' },
      })
    ).body.id;
    const checkout = (
      await api('POST', '/api/v1/checkout', { product_id: product, success_url: 'https://vendor.example/thanks' })
    ).body;
    const buyer = new WebClient(stack.url, stack.topology);
    const page = await buyer.get(`/checkout/${checkout.id}`);
    await buyer.post(`/checkout/${checkout.id}/pay`, {
      _csrf: WebClient.csrf(page.html),
      email: 'subscriber@example.com',
      card: '4242424242424242',
    });
    sub = { id: (await api('GET', `/api/v1/checkout/${checkout.id}`)).body.subscription_id, session: checkout.id };
    const portal = await api('POST', `/api/v1/subscriptions/${sub.id}/billing_portal`);
    expect(portal.status).toBe(200);
    billing = new URL(portal.body.url).pathname;
  });

  const cookie = () => [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  async function hit(method: string, path: string, form?: Record<string, string>) {
    const req: FuzzRequest = {
      op: `${method} ${path}`,
      method,
      path,
      headers: {
        cookie: cookie(),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form
        ? Buffer.from(
            Object.entries(form)
              .map(([k, v]) => `${k}=${v}`)
              .join('&'),
          )
        : undefined,
    };
    const res = await send(stack.url, req);
    const op: Operation = { method, template: path, operationId: 'page', params: [], html: true };
    return { res, wrong: problemWith(op, req, res), shown: show(req, res) };
  }
  const csrfOf = async () => WebClient.csrf((await web.get(`/dashboard/subscriptions/${sub.id}`)).html);
  const status = async () =>
    /data-testid="subscription-status">([\s\S]*?)<\/dd>/.exec(
      (await web.get(`/dashboard/subscriptions/${sub.id}`)).html,
    )?.[1];

  it('the list’s filters and pages, one subscription, the cancel form: 200 or a 4xx page, the subscription unchanged', async () => {
    const before = await status();
    expect(before).toContain('active');
    const csrf = await csrfOf();
    const failures: string[] = [];
    const pathId = (v: string) => `/dashboard/subscriptions/${v}`;
    const requests: [string, string, Record<string, string>?][] = [];
    for (const v of HOSTILE) {
      for (const q of ['status', 'product_id', 'customer_email', 'starting_after'])
        requests.push(['GET', `/dashboard/subscriptions?${q}=${v}`]);
      requests.push(['GET', pathId(v)]);
      requests.push(['POST', `${pathId(v)}/cancel?at_period_end=false`, { _csrf: csrf, confirm: 'yes' }]);
      // The real subscription: a hostile at_period_end or confirm asks for the confirmation (nothing is cancelled).
      requests.push(['POST', `${pathId(sub.id)}/cancel?at_period_end=${v}`, { _csrf: csrf }]);
      requests.push(['POST', `${pathId(sub.id)}/cancel?at_period_end=false`, { _csrf: csrf, confirm: v }]);
      // No or a wrong CSRF token: refused.
      requests.push(['POST', `${pathId(sub.id)}/cancel?at_period_end=false`, { _csrf: v, confirm: 'yes' }]);
    }
    let confirmations = 0;
    for (const [method, path, form] of requests) {
      const { res, wrong, shown } = await hit(method, path, form);
      if (wrong) failures.push(`${wrong}\n${shown}`);
      if (res.status === 200 && res.text.includes('<title>Cancel subscription?')) confirmations++;
    }
    expect(failures).toEqual([]);
    // The hostile at_period_end and confirm values reached the form, which asked to confirm.
    expect(confirmations).toBeGreaterThanOrEqual(HOSTILE.length);
    expect(await status()).toBe(before);
    expect(requests.length).toBeGreaterThan(150);
  }, 120_000);

  it('the billing page: hostile session ids, tokens and cards give a 4xx page; a bad card changes nothing', async () => {
    const [, , session, , token] = billing.split('/');
    expect(session).toBe(sub.session);
    const failures: string[] = [];
    let refusedCards = 0;
    for (const v of HOSTILE) {
      for (const [method, path, form] of [
        ['GET', `/checkout/${v}/billing/${token}`],
        ['POST', `/checkout/${v}/billing/${token}`, { card: '4242424242424242' }],
        ['GET', `/checkout/${session}/billing/${v}`],
        ['POST', `/checkout/${session}/billing/${v}`, { card: '4242424242424242' }],
        ['POST', billing, { card: v }],
        ['POST', billing, { [v || 'x']: '4242424242424242' }],
      ] as [string, string, Record<string, string>?][]) {
        const { res, wrong, shown } = await hit(method, path, form);
        if (wrong) failures.push(`${wrong}\n${shown}`);
        if (path === billing && res.status === 402) refusedCards++;
      }
    }
    expect(failures).toEqual([]);
    // Each hostile card reached the page and was refused there (no test card among them).
    expect(refusedCards).toBeGreaterThanOrEqual(HOSTILE.length);
    expect((await hit('GET', billing)).res.status).toBe(200);
    expect(await status()).toContain('active');
  }, 120_000);
});
