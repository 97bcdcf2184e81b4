import { request } from 'node:http';
import { LicenseServiceClient } from '@licensing/proto';
import { connectMongo, createClient } from '@licensing/runtime';
import { client, startStack, TestClock, type Stack } from '../support/stack';
import { credentialOf } from '../../scripts/lib/topology';
import { PrivateNats } from '../support/nats-server';
import { HoldingProxy } from '../support/holding-proxy';
import { NatsDroppingProxy } from '../support/nats-dropping-proxy';
import { eventually } from '../support/eventually';
import { cacheHits, metric } from '../support/metrics';
import { EventLog } from '../support/events';
import { freePort } from '../../scripts/lib/net';

// The gateways answer validations from memory and stay exact through events:
// two gateways over the same services, a private NATS that can be restarted,
// and a proxy that can hold the licence service's answers back.
// Own stack: its clock is moved by hand (TestClock) and it runs over a NATS server of its own that it restarts.
let nats: PrivateNats;
let stack: Stack;
const clock = new TestClock();

beforeAll(async () => {
  nats = await PrivateNats.start();
  stack = await startStack({ natsUrl: nats.url }, {}, clock);
});

afterAll(async () => {
  await stack?.stop();
  await nats?.stop();
});

type Api = ReturnType<typeof client>;

async function setUp(policy: Record<string, unknown> = {}) {
  const { accountId, apiKey } = await stack.newAccount();
  const api = client(stack.url, apiKey);
  const product = (await api('POST', '/api/v1/products', { name: 'Cached', policy })).body.id as string;
  const issue = async () =>
    (await api('POST', '/api/v1/licenses', { product_id: product, customer_email: 'cache@example.com' })).body
      .license_key as string;
  return { accountId, apiKey, api, product, issue };
}

const validate = (api: Api, key: string, fingerprint?: string) =>
  api('GET', `/api/v1/licenses/validate?license_key=${key}${fingerprint ? `&fingerprint=${fingerprint}` : ''}`);
const code = async (api: Api, key: string, fingerprint?: string) =>
  (await validate(api, key, fingerprint)).body.code as string;
/** An answer without cache_until, which moves with the clock. */
const timeless = ({ cache_until, ...rest }: Record<string, unknown>) => ({ ...rest, cache_until: typeof cache_until });
/** The account's validation counts as the licence service keeps them. */
async function countsOf(accountId: string): Promise<number> {
  // The dashboard's statistics: the web component's call.
  const licenses = createClient(LicenseServiceClient, stack.addrs.license, credentialOf(stack.topology, 'web'));
  try {
    const stats = await licenses.call.getStats({ account_id: accountId });
    return stats.validations_by_hour.reduce((sum, h) => sum + h.validations, 0);
  } finally {
    licenses.close();
  }
}
/** Waits until the account's validation counts (as the licence service keeps them) add up to `n`. */
async function countsReach(accountId: string, n: number): Promise<void> {
  await eventually(async () => expect(await countsOf(accountId)).toBe(n), { timeoutMs: 30_000 });
}
const hits = cacheHits;

describe('answers from memory', () => {
  it('a second validation of a known licence is a cache hit, identical to the service answer', async () => {
    const { api, issue } = await setUp();
    const key = await issue();
    const first = await validate(api, key);
    // The licence's own license.created event may reach the gateway after the first answer and evict
    // it (events evict, whichever they are): the next validation after that is from memory.
    const second = await eventually(async () => {
      const before = await hits(stack.metricsUrls.gateway);
      const again = await validate(api, key);
      expect(await hits(stack.metricsUrls.gateway)).toBe(before + 1);
      return again;
    });
    expect(second.status).toBe(200);
    expect(timeless(second.body)).toEqual(timeless(first.body));
    expect(second.headers.get('ratelimit-policy')).toBe(first.headers.get('ratelimit-policy'));
    expect(second.headers.get('x-request-id')).toBeTruthy();
  });

  it("a validate-scope key never sees the licence's metadata: not from the licence service, not from memory", async () => {
    const { accountId, apiKey, api, issue } = await setUp();
    const key = await issue();
    await api('PATCH', `/api/v1/licenses/${key}`, { metadata: { crm_id: 'C-77', note: 'VIP' } });
    const appKey = (await stack.admin.createApiKey({ account_id: accountId, scope: 'validate', name: 'app' })).secret;
    const uncached = (await stack.extraGateway({ VALIDATION_CACHE_SIZE: '0' })).url;
    const seen = async (base: string, secret: string) =>
      (await client(base, secret)('POST', '/api/v1/keys/validate', { key })).body.license.metadata;
    // Answered by the licence service (a gateway without a cache, and this one's first look-up after the PATCH).
    expect(await seen(uncached, appKey)).toEqual({});
    expect(await seen(stack.url, appKey)).toEqual({});
    // Answered from memory.
    const cached = await eventually(async () => {
      const before = await hits(stack.metricsUrls.gateway);
      const metadata = await seen(stack.url, appKey);
      expect(await hits(stack.metricsUrls.gateway)).toBe(before + 1);
      return metadata;
    });
    expect(cached).toEqual({});
    // The vendor's full key still sees it, both ways.
    expect(await seen(uncached, apiKey)).toEqual({ crm_id: 'C-77', note: 'VIP' });
    expect(await seen(stack.url, apiKey)).toEqual({ crm_id: 'C-77', note: 'VIP' });
  });

  it('answers exactly as the licence service does, through activation, grace and expiry (cache on vs cache off)', async () => {
    const { apiKey, api, issue } = await setUp({
      duration_days: 30,
      grace_days: 3,
      max_activations: 1,
      require_activation: true,
    });
    const uncached = client((await stack.extraGateway({ VALIDATION_CACHE_SIZE: '0' })).url, apiKey);
    const key = await issue();
    const both = async (fingerprint?: string) => {
      // Twice on the cached gateway: the second answer comes from memory.
      await validate(api, key, fingerprint);
      const [cached, fresh] = [
        (await validate(api, key, fingerprint)).body,
        (await validate(uncached, key, fingerprint)).body,
      ];
      expect(timeless(cached)).toEqual(timeless(fresh));
      return cached.code as string;
    };
    expect(await both()).toBe('not_activated');
    expect(await both('machine-a')).toBe('not_activated');
    expect((await api('POST', `/api/v1/licenses/${key}/activations`, { fingerprint: 'machine-a' })).status).toBe(201);
    await eventually(async () => expect(await both('machine-a')).toBe('valid'));
    expect(await both('machine-b')).toBe('activation_limit_reached');
    clock.advance(31 * 86_400_000);
    expect(await both('machine-a')).toBe('expired_in_grace');
    clock.advance(3 * 86_400_000);
    expect(await both('machine-a')).toBe('expired');
    const bad = await validate(api, 'ZZZZZ-ZZZZZ');
    expect(bad.body).toMatchObject({ valid: false, code: 'not_found' });
  });
});

describe('exact through events', () => {
  it('a suspend is seen by both gateways (two processes) within 1 s, and a reinstate too (the entries live 60 s)', async () => {
    const { apiKey, api, issue } = await setUp();
    const other = client((await stack.gatewayProcess()).url, apiKey);
    const key = await issue();
    for (const gw of [api, other]) {
      expect(await code(gw, key)).toBe('valid');
      expect(await code(gw, key)).toBe('valid'); // now from memory
    }
    expect((await api('POST', `/api/v1/licenses/${key}/suspend`)).status).toBe(200);
    await eventually(
      async () => {
        expect(await code(api, key)).toBe('suspended');
        expect(await code(other, key)).toBe('suspended');
      },
      { timeoutMs: 1000 },
    );
    expect((await other('POST', `/api/v1/licenses/${key}/reinstate`)).status).toBe(200);
    await eventually(
      async () => {
        expect(await code(api, key)).toBe('valid');
        expect(await code(other, key)).toBe('valid');
      },
      { timeoutMs: 1000 },
    );
  });

  it('the licence service remembers licences too: a change through one instance is seen through another within 1 s', async () => {
    const { apiKey, api, issue } = await setUp();
    const second = await stack.extraService('license');
    // Gateways without caches of their own: every validation reaches a licence service, the first or the second.
    const viaFirst = client((await stack.extraGateway({ VALIDATION_CACHE_SIZE: '0' })).url, apiKey);
    const viaSecond = client(
      (await stack.extraGateway({ VALIDATION_CACHE_SIZE: '0', LICENSE_GRPC_ADDR: second.addr })).url,
      apiKey,
    );
    const serviceHits = () => metric(second.metricsUrl, /^licensing_license_cache_total\{.*result="hit"/);
    const key = await issue();
    for (const gw of [viaFirst, viaSecond]) expect(await code(gw, key)).toBe('valid');
    // Answered from the second instance's memory (once the licence's own license.created, which evicts, has reached it).
    await eventually(async () => {
      const before = await serviceHits();
      expect(await code(viaSecond, key)).toBe('valid');
      expect(await serviceHits()).toBe(before + 1);
    });
    // The main gateway's suspend is made by the first instance: it sees its own write at once.
    expect((await api('POST', `/api/v1/licenses/${key}/suspend`)).status).toBe(200);
    expect(await code(viaFirst, key)).toBe('suspended');
    await eventually(async () => expect(await code(viaSecond, key)).toBe('suspended'), { timeoutMs: 1000 });
  });

  describe('a gateway that loses eviction events (core NATS would drop them unnoticed)', () => {
    let proxy: NatsDroppingProxy;
    beforeEach(async () => {
      proxy = await NatsDroppingProxy.start({ host: '127.0.0.1', port: nats.port });
    });
    afterEach(() => proxy.stop());

    /** A gateway whose NATS connection goes through the proxy, with a licence in its memory. */
    async function lossyGateway() {
      const { apiKey, api, issue } = await setUp();
      const gw = await stack.extraGateway({ NATS_URL: proxy.url });
      const lossy = client(gw.url, apiKey);
      const key = await issue();
      const fromMemory = () =>
        eventually(
          async () => {
            const before = await hits(gw.metricsUrl);
            expect(await code(lossy, key)).toBe('valid');
            expect(await hits(gw.metricsUrl)).toBe(before + 1);
          },
          { timeoutMs: 10_000 },
        );
      await fromMemory();
      const evictions = () =>
        metric(gw.metricsUrl, /^licensing_validation_cache_evictions_total\{.*event="license.revoked"/);
      return { api, lossy, key, fromMemory, evictions };
    }

    it('a lost revocation shows as a gap in what the gateway follows: it stops answering from memory within the second', async () => {
      const { api, lossy, key, evictions } = await lossyGateway();
      const evictedBefore = await evictions();
      proxy.drop((subject) => subject.endsWith('.license.revoked'));
      expect((await api('POST', `/api/v1/licenses/${key}/revoke`)).status).toBe(200);
      await eventually(async () => expect(await code(lossy, key)).toBe('revoked'), { timeoutMs: 1000 });
      expect(proxy.dropped.filter((s) => s.endsWith('.license.revoked')).length).toBeGreaterThan(0); // it was sent, and lost
      expect(await evictions()).toBe(evictedBefore); // so no event evicted it: the gap did
    });

    it('a gateway that hears nothing at all (not even heartbeats) stops answering from memory within the second, and uses it again once it hears', async () => {
      const { api, lossy, key, fromMemory } = await lossyGateway();
      proxy.drop(() => true);
      expect((await api('POST', `/api/v1/licenses/${key}/suspend`)).status).toBe(200);
      await eventually(async () => expect(await code(lossy, key)).toBe('suspended'), { timeoutMs: 1000 });
      expect(await code(lossy, key)).toBe('suspended');
      proxy.heal();
      expect((await api('POST', `/api/v1/licenses/${key}/reinstate`)).status).toBe(200);
      await fromMemory(); // following again: answers from memory, and the right ones
    });
  });

  // Before the NATS restart test, whose delayed events could arrive during this one.
  it('a key revoked while its lookup was in flight is not cached', async () => {
    const { apiKey, api, issue } = await setUp();
    const proxy = await HoldingProxy.start({ host: '127.0.0.1', port: Number(stack.addrs.license.split(':')[1]) });
    try {
      const gw = await stack.extraGateway({ LICENSE_GRPC_ADDR: proxy.address });
      const slow = client(gw.url, apiKey);
      const [warm, key] = [await issue(), await issue()];
      expect(await code(slow, warm)).toBe('valid'); // channel up, API key cached
      const served = () =>
        metric(stack.metricsUrls.license, /^licensing_grpc_server_handled_total\{.*method="ValidateLicense"/);
      const evicted = () =>
        metric(gw.metricsUrl, /^licensing_validation_cache_evictions_total\{.*event="license.revoked"/);
      const [servedBefore, evictedBefore] = [await served(), await evicted()];

      proxy.hold();
      const inFlight = validate(slow, key);
      await eventually(async () => expect(await served()).toBe(servedBefore + 1)); // the service answered "valid"...
      expect((await api('POST', `/api/v1/licenses/${key}/revoke`)).status).toBe(200);
      // ...and the revocation reached the gateway first (at least once: the write's own flush and the
      // outbox relay may both publish it, and core NATS subscribers see both; JetStream keeps one).
      await eventually(async () => expect(await evicted()).toBeGreaterThan(evictedBefore));
      proxy.release();
      expect((await inFlight).body.code).toBe('valid'); // the answer of its moment
      expect(await code(slow, key)).toBe('revoked'); // but it was not kept
    } finally {
      proxy.release();
      await proxy.stop();
    }
  });

  it('while NATS is away the cache is not trusted, and after NATS restarts no stale answer is given', async () => {
    const { api, apiKey, issue } = await setUp();
    const other = client((await stack.gatewayProcess()).url, apiKey); // a second gateway, its own process
    const key = await issue();
    for (const gw of [api, other]) {
      expect(await code(gw, key)).toBe('valid');
      expect(await code(gw, key)).toBe('valid');
    }
    await nats.pause();
    const natsSays = async (status: string) => {
      for (const gw of [api, other])
        expect((await gw('GET', '/api/v1/status')).body.dependencies.nats.status).toBe(status);
    };
    try {
      await eventually(() => natsSays('down'));
      expect(await code(api, key)).toBe('valid'); // asked again, and not kept: nothing could evict it now
      // The change cannot be announced (its event waits in the outbox), yet no gateway answers from memory.
      expect((await api('POST', `/api/v1/licenses/${key}/revoke`)).status).toBe(200);
      for (const gw of [api, other]) expect(await code(gw, key)).toBe('revoked');
    } finally {
      await nats.resume();
    }
    await eventually(() => natsSays('ok'), { timeoutMs: 10_000 });
    for (const gw of [api, other, api, other]) expect(await code(gw, key)).toBe('revoked');
  });
});

/** A GET with headers exactly as listed (a name may repeat), as fetch cannot send it. */
function rawGet(
  url: string,
  headers: string[],
): Promise<{ status: number; requestId: string; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    // With a list, node:http adds no Host of its own (and a request without one is refused).
    const req = request(url, { headers: ['Host', new URL(url).host, ...headers] }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode!, requestId: String(res.headers['x-request-id']), body: JSON.parse(text) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('headers sent twice', () => {
  it('are left to Express, which reads them as node:http merges them (the fast path reads each once)', async () => {
    const { apiKey, api, issue } = await setUp();
    const key = await issue();
    await validate(api, key); // now in the cache: a plain request would take the fast path
    const url = `${stack.url}/api/v1/licenses/validate?license_key=${key}`;
    const once = await rawGet(url, ['Authorization', `Bearer ${apiKey}`, 'X-Request-Id', 'req-twice-a']);
    expect(once).toMatchObject({ status: 200, requestId: 'req-twice-a', body: { code: 'valid' } });
    // Two request ids are merged into "req-twice-a, req-twice-b", which is no sane id: a new one is made.
    const twice = await rawGet(url, [
      'Authorization',
      `Bearer ${apiKey}`,
      'X-Request-Id',
      'req-twice-a',
      'x-request-id',
      'req-twice-b',
    ]);
    expect(twice.status).toBe(200);
    expect(twice.requestId).toMatch(/^req_[0-9a-f]+$/);
    expect(timeless(twice.body)).toEqual(timeless(once.body));
    // Of two Authorization headers node:http keeps the first: a wrong second one changes nothing.
    const keys = await rawGet(url, ['Authorization', `Bearer ${apiKey}`, 'authorization', 'Bearer lk_full_wrong']);
    expect(keys.status).toBe(200);
    expect(timeless(keys.body)).toEqual(timeless(once.body));
  });
});

describe('a key the gateway does not know', () => {
  it('is answered without Express exactly as through it, errors included (one problem format, the request id)', async () => {
    const { apiKey, api, issue } = await setUp();
    const key = await issue();
    // A gateway whose licence service is unreachable: every unknown key fails the same way.
    const gw = await stack.extraGateway({ LICENSE_GRPC_ADDR: `127.0.0.1:${await freePort()}` });
    const other = client(gw.url, apiKey);
    expect((await other('GET', '/api/v1/products')).status).toBe(200); // the API key is now known here
    // A plain query takes the fast path; a percent-encoded value is left to Express (it must be decoded).
    const fast = await other('GET', `/api/v1/licenses/validate?license_key=${key}&fingerprint=ab`, undefined, {
      'x-request-id': 'req-fast-path-1',
    });
    const routed = await other('GET', `/api/v1/licenses/validate?license_key=${key}&fingerprint=a%62`, undefined, {
      'x-request-id': 'req-express-1',
    });
    for (const [res, id] of [
      [fast, 'req-fast-path-1'],
      [routed, 'req-express-1'],
    ] as const) {
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: 'service_unavailable', status: 503, request_id: id });
      expect(res.headers.get('x-request-id')).toBe(id);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
      expect(res.headers.get('ratelimit-policy')).toBeTruthy();
    }
    expect({ ...fast.body, request_id: '' }).toEqual({ ...routed.body, request_id: '' });
    // And answered, the two paths agree too (the main gateway reaches the licence service).
    const ok = await validate(api, key, 'ab');
    expect(ok.body).toMatchObject({ valid: true, code: 'valid' });
    await gw.stop();
  });
});

describe('look-ups that meet', () => {
  it('go to the licence service in one call, each answered as if alone, and counted', async () => {
    const { api, apiKey, issue, accountId } = await setUp();
    const gw = client((await stack.extraGateway({ VALIDATION_CACHE_SIZE: '0' })).url, apiKey);
    const [valid, suspended] = [await issue(), await issue()];
    await api('POST', `/api/v1/licenses/${suspended}/suspend`);
    const elsewhere = await (await setUp()).issue(); // another account's key: not found here
    const keys = [valid, suspended, elsewhere];
    const alone = [];
    for (const key of keys) alone.push(timeless((await validate(gw, key)).body));
    const batched = () =>
      metric(stack.metricsUrls.license, /^licensing_grpc_server_handled_total\{.*ValidateLicenses.*code="OK"/);
    const calls = await batched();
    const together = await Promise.all(Array.from({ length: 60 }, (_, i) => validate(gw, keys[i % 3])));
    for (const [i, res] of together.entries()) expect(timeless(res.body)).toEqual(alone[i % 3]);
    expect(await batched()).toBeGreaterThan(calls);
    // Every validation counted once, batched or not: 3 alone and 60 together.
    await countsReach(accountId, 63);
  });
});

describe('validation counts off the hot path', () => {
  it('validations answered from memory reach the counts and the last-validated time, and a gateway stopping gracefully loses none', async () => {
    const { accountId, apiKey, api, issue } = await setUp();
    const key = await issue();
    const gw = await stack.extraGateway({ VALIDATION_STATS_FLUSH_MS: '60000' });
    const other = client(gw.url, apiKey);
    for (let i = 0; i < 5; i++) await validate(api, key);
    for (let i = 0; i < 7; i++) await validate(other, key);
    await gw.stop(); // its 7 were never flushed by the timer (60 s): only the shutdown flush sends them
    await countsReach(accountId, 12);
    const read = await eventually(async () => {
      const res = await api('GET', `/api/v1/licenses/${key}`);
      expect(res.body.last_validated_at).not.toBeNull();
      return res;
    });
    expect(new Date(read.body.last_validated_at).getTime()).toBeGreaterThan(
      new Date(read.body.created_at).getTime() - 1,
    );
  });
});

describe('validation counts after a licence service outage', () => {
  it('a backlog larger than the service accepts in one call (1 MiB), from many machines, all reaches it when it returns', async () => {
    const { accountId, apiKey, api, issue } = await setUp();
    await stack.admin.updateAccount({ id: accountId, per_minute_limit: 100_000, per_hour_limit: 100_000 });
    const key = await issue();
    const licenseId = (await api('GET', `/api/v1/licenses/${key}`)).body.id as string;
    const proxy = await HoldingProxy.start({ host: '127.0.0.1', port: Number(stack.addrs.license.split(':')[1]) });
    const db = await connectMongo(stack.topology.mongoUrl, `${stack.topology.dbPrefix}_license`);
    let validations = 0;
    try {
      const gw = await stack.extraGateway({ LICENSE_GRPC_ADDR: proxy.address });
      const viaProxy = client(gw.url, apiKey);
      await eventually(async () => {
        // From this gateway's memory (after the licence's own license.created has come by).
        const before = await hits(gw.metricsUrl);
        validations++;
        expect(await code(viaProxy, key)).toBe('valid');
        expect(await hits(gw.metricsUrl)).toBe(before + 1);
      });
      // Counts are sent at least once: a RecordValidations whose answer the cut loses would be sent again.
      // The backlog is what this test is about, so the cut waits until the tally has nothing in flight.
      await countsReach(accountId, validations);
      proxy.cut();
      // 2,200 machines whose fingerprints take 3 bytes a character (200 characters at most): their
      // groups of recent validations alone are over 1.2 MB, with no more requests than needed.
      const machines = Array.from({ length: 2200 }, (_, i) => `${i}-`.padEnd(200, '€'));
      expect(machines.reduce((sum, m) => sum + Buffer.byteLength(m), 0)).toBeGreaterThan(1.2 * 1024 * 1024);
      // Plain fetch: these answers need no check against the OpenAPI document, only their code.
      const validateOn = async (machine: string) => {
        validations++;
        const url = `${gw.url}/api/v1/licenses/validate?license_key=${key}&fingerprint=${encodeURIComponent(machine)}`;
        const res = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } });
        return ((await res.json()) as { code: string }).code;
      };
      // In batches of 110: all 2,200 must be answered within the cached answer's 60 s (VALIDATION_CACHE_TTL_MS),
      // which a slow machine nearly spent at 50 a batch.
      for (let i = 0; i < machines.length; i += 110) {
        const codes = await Promise.all(machines.slice(i, i + 110).map(validateOn));
        expect(codes).toEqual(codes.map(() => 'valid')); // from memory: the licence service is away
      }
      proxy.restore();
      await countsReach(accountId, validations);
      const groups = { license_id: licenseId, fingerprint: { $ne: '' } };
      await eventually(
        async () => expect(await db.collection('validation_seen').countDocuments(groups)).toBe(machines.length),
        { timeoutMs: 60_000, intervalMs: 500 }, // the licence service stores 2,200 groups: an upsert each over FerretDB
      );
    } finally {
      proxy.restore();
      await proxy.stop();
      await db.close();
    }
  }, 120_000); // 2,200 validations and as many stored groups
});

describe('API-key revocation', () => {
  it('a key revoked while its Authenticate call was in flight is not cached by that call', async () => {
    const acct = await stack.newAccount();
    const proxy = await HoldingProxy.start({ host: '127.0.0.1', port: Number(stack.addrs.account.split(':')[1]) });
    let log: EventLog | undefined;
    try {
      const gw = await stack.extraGateway({ ACCOUNT_GRPC_ADDR: proxy.address });
      expect((await client(gw.url, acct.apiKey)('GET', '/api/v1/status')).status).toBe(200); // channel up
      const victim = await stack.admin.createApiKey({
        account_id: acct.accountId,
        scope: 'full',
        name: 'victim',
        actor: 'test',
      });
      log = await EventLog.open(stack.topology.natsUrl, stack.topology.stream);
      const served = () =>
        metric(stack.metricsUrls.account, /^licensing_grpc_server_handled_total\{.*method="Authenticate".*code="OK"/);
      const servedBefore = await served();
      proxy.hold();
      const inFlight = client(gw.url, victim.secret)('GET', '/api/v1/status');
      await eventually(async () => expect(await served()).toBe(servedBefore + 1)); // the account service said "valid"; the answer is held
      await stack.admin.revokeApiKey({ account_id: acct.accountId, key_id: victim.api_key!.id, actor: 'test' });
      await log.waitFor((e) => e.type === 'api_key.revoked' && (e as any).data.api_key.id === victim.api_key!.id); // the revocation reached NATS first
      proxy.release();
      expect((await inFlight).status).toBe(200); // the answer of its moment...
      expect((await client(gw.url, victim.secret)('GET', '/api/v1/status')).status).toBe(401); // ...but not kept
    } finally {
      proxy.release();
      await log?.close();
      await proxy.stop();
    }
  });
});
