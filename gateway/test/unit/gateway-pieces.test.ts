import { AppError } from '@licensing/runtime';
import { redactUrl } from '@licensing/runtime';
import { problemOf } from '../../src/http/errors';
import { erasurePlaceholder, SEAT_RESCUE_QUEUED } from '../../src/routes/customers';
import { READINESS_MEMO_MS, Readiness } from '../../src/routes/status';
import { isWebPath } from '../../src/routes/web-proxy';
import { pageShape, readQuery, toPage } from '../../src/request-shapes/shapes';

describe('access-log redaction', () => {
  it('removes licence keys from query strings', () => {
    expect(redactUrl('/api/v1/licenses/validate?license_key=ABCDE-12345&x=1')).toBe(
      '/api/v1/licenses/validate?license_key=[redacted]&x=1',
    );
    expect(redactUrl('/v1/licenses/validate?x=1&LICENSE_KEY=abc')).toBe(
      '/v1/licenses/validate?x=1&LICENSE_KEY=[redacted]',
    );
    expect(redactUrl('/dashboard/licenses?q=ABCDE-12345')).toBe('/dashboard/licenses?q=[redacted]');
    expect(redactUrl('/api/v1/licenses?limit=5&customer_email=a%40b.co')).toBe(
      '/api/v1/licenses?limit=5&customer_email=[redacted]',
    );
    expect(redactUrl('/api/v1/products?limit=5')).toBe('/api/v1/products?limit=5');
  });
});

describe('list parameters', () => {
  const page = (query: Record<string, unknown>) => toPage(readQuery({ query } as never, pageShape), 'prod');

  it('defaults to 20 and accepts 1..100', () => {
    expect(page({})).toEqual({ limit: 20, starting_after: '' });
    expect(page({ limit: '1' }).limit).toBe(1);
    expect(page({ limit: '100' }).limit).toBe(100);
  });

  it.each([['0'], ['101'], ['-5'], ['1e2'], [' 5'], [''], [['5', '6']]])('refuses limit=%p', (limit) => {
    expect(() => page({ limit })).toThrow(/^limit must be a whole number from 1 to 100$/);
  });

  it('refuses a cursor that is not an id of the listed kind', () => {
    expect(() => page({ starting_after: 'lic_01JD8Z3K6Q2W4E5R6T7Y8V9X0P' })).toThrow(/starting_after must be an id/);
  });
});

describe('/readyz memo', () => {
  function setup() {
    let now = 0;
    const calls = { account: 0, redis: 0 };
    const pending: (() => void)[] = [];
    const account = {
      check: (_req: unknown, _opts: unknown, done: (err: null, res: { status: string }) => void) => {
        calls.account++;
        pending.push(() => done(null, { status: 'SERVING' }));
      },
    };
    const limits = { redisStatus: 'ok', redis: { ping: async () => void calls.redis++ } };
    const readiness = new Readiness({ health: { account } } as never, limits as never, () => now);
    const answerAll = () => {
      for (const done of pending.splice(0)) done();
    };
    return {
      readiness,
      calls,
      answerAll,
      advance: (ms: number) => {
        now += ms;
      },
    };
  }

  it('shares one probe among callers within a second, concurrent ones included, and probes again after it', async () => {
    const { readiness, calls, answerAll, advance } = setup();
    const first = Array.from({ length: 10 }, () => readiness.check());
    answerAll();
    expect((await Promise.all(first)).map((r) => r.ready)).toEqual(Array(10).fill(true));
    advance(READINESS_MEMO_MS - 1);
    await readiness.check();
    expect(calls).toEqual({ account: 1, redis: 1 });
    advance(1);
    const again = readiness.check();
    answerAll();
    await again;
    expect(calls).toEqual({ account: 2, redis: 2 });
  });

  it('answers ready without waiting for an account service that hangs: reported down, the probe still shared', async () => {
    let now = 0;
    let asked = 0;
    // A health check that never answers (a hung process: its connection is accepted, nothing comes back).
    const account = { check: () => void asked++ };
    const limits = { redisStatus: 'ok', redis: { ping: async () => undefined } };
    const readiness = new Readiness({ health: { account } } as never, limits as never, () => now, READINESS_MEMO_MS, 5);
    expect(await readiness.check()).toEqual({
      ready: true,
      body: { status: 'ready', account_service: { status: 'down', latency_ms: null }, rate_limits: 'redis' },
    });
    now += 10;
    expect((await readiness.check()).ready).toBe(true);
    expect(asked).toBe(1); // the hung probe is not asked again within the memo
  });

  it('says shutting_down at once while draining, from the same probe', async () => {
    const { readiness, calls, answerAll } = setup();
    const ready = readiness.check();
    answerAll();
    expect((await ready).body.status).toBe('ready');
    expect(await readiness.check(true)).toMatchObject({ ready: false, body: { status: 'shutting_down' } });
    expect(calls.account).toBe(1);
  });
});

describe('REST pieces', () => {
  it('an erasure placeholder is opaque, different each time, and in a reserved domain', () => {
    const a = erasurePlaceholder();
    expect(a).toMatch(/^erased-[0-9a-f]{16}@erased\.invalid$/);
    expect(erasurePlaceholder()).not.toBe(a);
  });

  it('a seat rescue answer names no address', () => {
    expect(SEAT_RESCUE_QUEUED).toEqual({ object: 'seat_rescue', status: 'queued' });
  });

  it('a problem keeps its standard members and adds extension members after them', () => {
    const p = problemOf(new AppError('conflict', 'activation_limit_reached: full'), 'req_1', {
      next_action: 'free_a_seat',
    });
    expect(p.status).toBe(409);
    expect(JSON.parse(p.body)).toEqual({
      type: '/docs#error-conflict',
      title: 'Conflict',
      status: 409,
      detail: 'activation_limit_reached: full',
      code: 'conflict',
      request_id: 'req_1',
      next_action: 'free_a_seat',
    });
    expect(problemOf(AppError.rateLimited('later', 12.2), 'r').headers['Retry-After']).toBe('13');
  });
});

describe('the paths the gateway passes to the web component', () => {
  it('are /dashboard, /portal and /checkout and everything under them, never a look-alike or the API', () => {
    for (const path of [
      '/dashboard',
      '/dashboard/',
      '/dashboard/licenses',
      '/portal',
      '/portal/acct_1/licenses',
      '/checkout/cs_1',
    ])
      expect([path, isWebPath(path)]).toEqual([path, true]);
    for (const path of ['/dashboardx', '/portals', '/checkouts', '/api/v1/licenses', '/api/v1/checkout', '/', '/docs'])
      expect([path, isWebPath(path)]).toEqual([path, false]);
  });
});
