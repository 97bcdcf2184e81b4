import { client, startStack, type Stack } from '../support/stack';
import { EventLog } from '../support/events';
import { eventually } from '../support/eventually';
import { SmtpInbox } from '../support/smtp-inbox';
import { WebClient } from '../support/web-client';
import { dashboardOwner } from '../support/fixture';
import type { ReceivedMail } from '../support/smtp-inbox';
import { verifySignature, WebhookReceiver } from '../support/webhook-receiver';

// One licence's life through every part of the system: a buyer pays on the hosted test-mode checkout
// page (checkout), the purchase mail with the key arrives over SMTP (notification), the buyer's app
// activates and validates the key with nothing but the key (gateway, licence), the vendor rerolls the
// key after a leak, the buyer is mailed the new key, the app is told to take the new one and the
// vendor's back end hears of it by a signed webhook, then the vendor exports the account, deletes
// the licence by mistake and restores it from the export, machines and all. And a batch of licences
// whose items asked for it are mailed their keys (licence service → license.batch_completed → mail).
// Then the vendor's dashboard mailing a licence: a reroll form that asks the new key's mail (web, licence,
// the licence's event, notification, SMTP) and the mail log with its "send again". And the audit log: a
// member's change in the dashboard, an API key's through the gateway and a service, and one no request
// asked for, each an entry with who made it and from where (gateway → service → event → account service).
// Own stack: customer mail goes to this file's SMTP inbox, with a fast send interval and retry schedule.

type Api = ReturnType<typeof client>;

let stack: Stack;
let inbox: SmtpInbox;
let receiver: WebhookReceiver;
let events: EventLog;
let vendor: Api;

beforeAll(async () => {
  [inbox, receiver] = await Promise.all([SmtpInbox.start(), WebhookReceiver.start()]);
  stack = await startStack(
    {
      customerMailUrl: inbox.url,
      mailRetryScheduleS: Array(40).fill('0.3').join(','),
      mailSendIntervalMs: 100,
    },
    { CHECKOUT_REQUESTS_PER_MINUTE: '1000' },
  );
  vendor = client(stack.url, (await stack.newAccount()).apiKey);
  events = await EventLog.open(stack.topology.natsUrl, stack.topology.stream);
});

afterAll(async () => {
  await events?.close();
  await stack?.stop();
  await inbox?.stop();
  await receiver?.stop();
});

/** Pays for `productId` on the hosted page as `email`: the session id. */
async function buyOnTheHostedPage(productId: string, email: string): Promise<string> {
  const session = await vendor('POST', '/api/v1/checkout', {
    product_id: productId,
    success_url: 'https://vendor.example/thanks',
  });
  expect(session.status).toBe(201);
  const web = new WebClient(stack.url, stack.topology);
  const page = await web.get(`/checkout/${session.body.id}`);
  expect(page.status).toBe(200);
  const paid = await web.post(`/checkout/${session.body.id}/pay`, {
    _csrf: WebClient.csrf(page.html),
    email,
    card: '4242424242424242',
  });
  expect(paid.status).toBe(303);
  return session.body.id as string;
}

/** Runs a job (an export or an import) to its end: its final state. */
const finished = (api: Api, path: string) =>
  eventually(
    async () => {
      const job = await api('GET', path);
      expect(job.body.status).toBe('done');
      return job.body;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );

it('bought, mailed, activated and validated, rerolled, exported and restored from the export', async () => {
  const product = await vendor('POST', '/api/v1/products', {
    name: 'Journey Pro',
    price: { amount: 2900, currency: 'EUR' },
    policy: { max_activations: 2, entitlements: ['export-pdf'] },
  });
  expect(product.status).toBe(201);
  const endpoint = await vendor('POST', '/api/v1/webhooks', {
    url: `${receiver.url}/hooks`,
    events: ['license.rerolled'],
  });
  expect(endpoint.status).toBe(201);

  // Bought and mailed: the key in the mail is the key the checkout issued.
  const buyer = `buyer-${Date.now()}@example.com`;
  const sessionId = await buyOnTheHostedPage(product.body.id, buyer);
  const completed = await events.waitFor(
    (e) => e.type === 'checkout.completed' && (e.data as { checkout: { id: string } }).checkout.id === sessionId,
  );
  const key = (completed.data as { license_key: string }).license_key;
  const mail = await inbox.mailTo(buyer);
  expect(mail.parts.find((p) => p.contentType === 'text/plain' && !p.filename)?.body).toContain(key);
  const session = await vendor('GET', `/api/v1/checkout/${sessionId}`);
  expect(session.body).toMatchObject({ status: 'complete', license_key: key, customer_email: buyer });

  // The buyer's app, with nothing but the key: activates this machine and validates.
  const app = client(stack.url);
  const asApp = { authorization: `License ${key}` };
  const activated = await app('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'laptop-1' }, asApp);
  expect(activated.status).toBe(201);
  const valid = await app('GET', `/api/v1/licenses/validate?license_key=${key}&fingerprint=laptop-1`, undefined, asApp);
  expect(valid.body).toMatchObject({ valid: true, code: 'valid', next_action: 'none' });
  expect(valid.body.entitlements).toEqual(['export-pdf']);

  // The key leaked: the vendor rerolls it; the old key still validates for the grace, telling the app to update.
  const rerolled = await vendor('POST', `/api/v1/licenses/${key}/reroll`, { grace_hours: 24, send_email: true });
  expect(rerolled.status).toBe(200);
  const newKey = rerolled.body.key as string;
  expect(newKey).not.toBe(key);
  // The new key is mailed to the buyer (queued by the notification service from license.rerolled), once:
  // a retry with the old key (its answer lost) answers the same new key and mails nothing twice.
  const mailsOf = async (k: string) =>
    ((await vendor('GET', '/api/v1/emails?limit=100')).body.data as { license_key: string; to: string }[]).filter(
      (e) => e.license_key === k,
    );
  const mails = await eventually(async () => {
    const got = await mailsOf(newKey);
    expect(got).toHaveLength(1);
    return got;
  });
  expect(mails[0].to).toBe(buyer);
  const retried = await vendor('POST', `/api/v1/licenses/${key}/reroll`, { grace_hours: 24, send_email: true });
  expect([retried.status, retried.body.key]).toEqual([200, newKey]);
  expect(await mailsOf(newKey)).toHaveLength(1);
  const [hook] = await receiver.waitFor('/hooks', 1);
  expect(verifySignature(endpoint.body.secret, hook)).toBe(true);
  expect(JSON.parse(hook.body)).toMatchObject({ type: 'license.rerolled', data: { previous_key: key } });
  const old = await app('GET', `/api/v1/licenses/validate?license_key=${key}`, undefined, asApp);
  expect(old.body).toMatchObject({ valid: true, next_action: 'update_key' });
  expect(JSON.stringify(old.body)).not.toContain(newKey);
  const fresh = await vendor('GET', `/api/v1/licenses/validate?license_key=${newKey}&fingerprint=laptop-1`);
  expect(fresh.body).toMatchObject({ valid: true, code: 'valid', next_action: 'none' });

  // Exported, and imported into another account (the vendor's other installation): the new key validates there.
  const started = await vendor('POST', '/api/v1/exports');
  expect(started.status).toBe(202);
  const exported = await finished(vendor, `/api/v1/exports/${started.body.id}`);
  const file = await vendor('GET', exported.download_url);
  expect(file.status).toBe(200);
  const text = typeof file.body === 'string' ? file.body : `${JSON.stringify(file.body)}\n`;
  expect(text).toContain(newKey);

  // Deleted by mistake, and restored from the export: the licence comes back with its key and machines,
  // and what the account still holds (the product, the webhook endpoint) is skipped, not doubled.
  expect((await vendor('DELETE', `/api/v1/licenses/${newKey}`)).status).toBe(204);
  expect((await vendor('GET', `/api/v1/licenses/validate?license_key=${newKey}`)).body).toMatchObject({
    valid: false,
    code: 'not_found',
  });
  const importing = await vendor('POST', '/api/v1/imports?format=jsonl', text, {
    'content-type': 'application/x-ndjson',
  });
  expect(importing.status).toBe(202);
  const imported = await finished(vendor, `/api/v1/imports/${importing.body.id}`);
  expect(imported).toMatchObject({ imported: 1, rejected: 0, errors: [] });
  const restored = await app('GET', `/api/v1/licenses/validate?license_key=${newKey}&fingerprint=laptop-1`, undefined, {
    authorization: `License ${newKey}`,
  });
  expect(restored.body).toMatchObject({ valid: true, code: 'valid', entitlements: ['export-pdf'] });
  const machines = await vendor('GET', `/api/v1/licenses/${newKey}/activations`);
  expect(machines.body.data.map((a: { fingerprint: string }) => a.fingerprint)).toEqual(['laptop-1']);
});

const MAIL_WAIT = { timeoutMs: 30_000, intervalMs: 50 };
const textOf = (m: ReceivedMail) => m.parts.find((p) => p.contentType === 'text/plain' && !p.filename)!.body;

it("the dashboard's reroll form with the mail box ticked mails the new key through license.rerolled", async () => {
  const owner = await dashboardOwner(stack);
  const product = (await owner.api('POST', '/api/v1/products', { name: 'Dash Mailed' })).body.id;
  const key = (
    await owner.api('POST', '/api/v1/licenses', { product_id: product, customer_email: 'dash-reroll@example.com' })
  ).body.license_key as string;
  const form = await owner.web.get(`/dashboard/licenses/${key}/reroll`);
  expect(form.status).toBe(200);
  const done = await owner.web.post(`/dashboard/licenses/${key}/reroll`, {
    _csrf: WebClient.csrf(form.html),
    grace_hours: '0',
    confirm: 'yes',
    send_email: 'yes',
  });
  expect(done.status).toBe(303);
  const newKey = (await owner.api('GET', '/api/v1/licenses?customer_email=dash-reroll@example.com')).body.data[0].key;
  expect(newKey).not.toBe(key);
  expect(textOf(await inbox.mailTo('dash-reroll@example.com', 1, MAIL_WAIT))).toContain(newKey);
  const event = events.all().find((e) => e.type === 'license.rerolled' && (e.data as any).license.key === newKey)!;
  expect(event.send_email).toBe(true);
});

it("the dashboard lists the mail log and sends a licence's e-mail again; another vendor sees and sends none of it", async () => {
  const owner = await dashboardOwner(stack);
  const bad = await owner.web.post('/dashboard/settings/support-email', {
    _csrf: owner.csrf,
    support_email: 'not an address',
  });
  expect(bad.status).toBe(400);
  expect(bad.html).toContain('support_email must be a valid e-mail address');
  const saved = await owner.web.post('/dashboard/settings/support-email', {
    _csrf: owner.csrf,
    support_email: 'care@dash.example',
  });
  expect(saved.status).toBe(200);
  expect(saved.html).toContain('value="care@dash.example"');
  const product = (await owner.api('POST', '/api/v1/products', { name: 'Dash Product' })).body.id;
  const key = (
    await owner.api('POST', '/api/v1/licenses', {
      product_id: product,
      customer_email: 'dash@example.com',
      send_email: true,
    })
  ).body.license_key;
  expect(textOf(await inbox.mailTo('dash@example.com', 1, MAIL_WAIT))).toContain('care@dash.example');
  const log = await owner.web.get('/dashboard/emails');
  expect(log.status).toBe(200);
  expect(log.html).toContain('dash@example.com');
  expect(log.html).toContain(key);
  const page = await owner.web.get(`/dashboard/licenses/${key}`);
  expect(page.html).toContain('Send the e-mail again');
  const sent = await owner.web.post(`/dashboard/licenses/${key}/email`, { _csrf: WebClient.csrf(page.html) });
  expect(sent.status).toBe(202);
  expect(sent.html).toContain('The e-mail to dash@example.com is queued.');
  await inbox.mailTo('dash@example.com', 2, MAIL_WAIT);
  const other = await dashboardOwner(stack, 'other');
  expect((await other.web.get('/dashboard/emails')).html).not.toContain('dash@example.com');
  const otherPage = await other.web.get('/dashboard/emails');
  const refused = await other.web.post(`/dashboard/licenses/${key}/email`, { _csrf: WebClient.csrf(otherPage.html) });
  expect(refused.status).toBe(404);
  expect(inbox.to('dash@example.com')).toHaveLength(2);
});

it('a licence batch mails the items that asked for it their key, once each', async () => {
  const product = (await vendor('POST', '/api/v1/products', { name: 'Journey Bulk' })).body.id as string;
  const started = await vendor('POST', '/api/v1/licenses/batch', {
    product_id: product,
    licenses: [
      { customer_email: 'bulk-a@example.com', send_email: true },
      { customer_email: 'bulk-b@example.com' },
      { customer_email: 'bulk-c@example.com', send_email: true },
    ],
  });
  expect(started.status).toBe(202);
  const job = await finished(vendor, `/api/v1/licenses/batch/${started.body.id}`);
  const keys = job.results.map((r: { license_key: string }) => r.license_key);
  // Queued by the notification service from license.batch_completed (the licence service's summary).
  const mails = async () =>
    ((await vendor('GET', '/api/v1/emails?limit=100')).body.data as { to: string; license_key: string }[]).filter((e) =>
      keys.includes(e.license_key),
    );
  await eventually(async () => {
    const queued = await mails();
    expect(queued.map((m) => [m.to, m.license_key]).sort()).toEqual([
      ['bulk-a@example.com', keys[0]],
      ['bulk-c@example.com', keys[2]],
    ]);
  });
});

type AuditEntry = {
  id: string;
  actor: { type: string; id: string; name: string | null };
  action: string;
  target: { type: string; id: string };
  request_id: string | null;
  ip: string | null;
  user_agent: string | null;
};

/** The entries about one object, once `count` of them are there. */
async function entriesAbout(api: Api, targetId: string, count: number): Promise<AuditEntry[]> {
  return eventually(
    async () => {
      const r = await api('GET', `/api/v1/audit-events?target_id=${encodeURIComponent(targetId)}`);
      expect(r.status).toBe(200);
      expect(r.body.data).toHaveLength(count);
      return r.body.data as AuditEntry[];
    },
    { timeoutMs: 20_000, intervalMs: 250 },
  );
}

describe('the audit log', () => {
  it('records who changed what, from where: a member in the dashboard, an API key, the system', async () => {
    // A member signs up and makes an API key in Settings (the dashboard: the member acts).
    const owner = await dashboardOwner(stack, 'audited');
    const keys = await owner.api('GET', '/api/v1/api-keys');
    const key = keys.body.data.find((k: { name: string }) => k.name === 'api');
    const [made] = await entriesAbout(owner.api, key.id, 1);
    expect(made).toMatchObject({
      action: 'api_key.created',
      actor: {
        type: 'member',
        id: expect.stringMatching(/^user_/),
        name: expect.stringMatching(/^audited-.*@example\.com$/),
        email: expect.stringMatching(/^audited-.*@example\.com$/),
      },
      target: { type: 'api_key', id: key.id },
      request_id: expect.any(String),
      ip: expect.any(String),
    });

    // The key suspends a licence: the request's id, address and agent are on the entry, the key by its name.
    const product = (await owner.api('POST', '/api/v1/products', { name: 'Audited App' })).body;
    const issued = await owner.api('POST', '/api/v1/licenses', {
      product_id: product.id,
      customer_email: 'buyer@example.com',
    });
    expect(issued.status).toBe(201);
    const license = issued.body.license;
    const suspended = await owner.api('POST', `/api/v1/licenses/${license.key}/suspend`, undefined, {
      'x-request-id': 'req-audit-suspend-1',
      'user-agent': 'vendor-backend/3.1',
    });
    expect(suspended.status).toBe(200);
    const about = await entriesAbout(owner.api, license.id, 2);
    expect(about.map((e) => e.action)).toEqual(['license.suspended', 'license.created']);
    expect(about[0]).toMatchObject({
      actor: { type: 'api_key', id: key.id, name: 'api' },
      target: { type: 'license', id: license.id },
      request_id: 'req-audit-suspend-1',
      ip: expect.stringMatching(/127\.0\.0\.1/),
      user_agent: 'vendor-backend/3.1',
    });
    const filtered = await owner.api('GET', `/api/v1/audit-events?action=license.suspended&actor_id=${key.id}`);
    expect(filtered.body.data.map((e: AuditEntry) => e.target.id)).toEqual([license.id]);

    // An account made by the operator, with its first key: no request of the account's, so the system's.
    const other = await stack.newAccount();
    const otherApi = client(stack.url, other.apiKey);
    const otherKey = (await otherApi('GET', '/api/v1/api-keys')).body.data[0];
    const [bySystem] = await entriesAbout(otherApi, otherKey.id, 1);
    expect(bySystem).toMatchObject({
      action: 'api_key.created',
      actor: { type: 'system' },
      request_id: null,
      ip: null,
      user_agent: null,
    });

    // And that account sees none of the first one's.
    const theirs = await otherApi('GET', `/api/v1/audit-events?target_id=${license.id}`);
    expect([theirs.status, theirs.body.data]).toEqual([200, []]);
    const bad = await owner.api('GET', '/api/v1/audit-events?since=2026-05-02&until=2026-05-01');
    expect([bad.status, bad.body.code]).toEqual([400, 'invalid_request']);
  });
});
