import { AccessLog, accessLine } from '../../src/observability/access-log';

const KEY = '7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V';
const TIME = '2026-11-27T06:30:00.123Z';

/** A sink that keeps what it is given. */
function memorySink() {
  const lines: string[] = [];
  let flushed = 0;
  return { lines, flushes: () => flushed, write: (l: string) => void lines.push(l), flushSync: () => void flushed++ };
}

describe('the access log line', () => {
  it('is one JSON line with the fields operators filter by, in the loggers’ common keys', () => {
    const started = 1_000_000_000n;
    const line = accessLine(
      {
        requestId: 'req_1',
        method: 'POST',
        url: `/api/v1/licenses/${KEY}/activations/act_1?limit=5`,
        status: 201,
        startedNs: started,
        route: '/api/v1/licenses/:key/activations/:id',
        ids: { id: 'act_1' },
        caller: { accountId: 'acct_A', keyId: 'key_B' },
      },
      'gateway',
      TIME,
      started + 1_234_567n,
    );
    expect(line.endsWith('}\n')).toBe(true);
    expect(line.split('\n')).toHaveLength(2);
    expect(JSON.parse(line)).toEqual({
      level: 30,
      time: TIME,
      service: 'gateway',
      name: 'gateway',
      request_id: 'req_1',
      method: 'POST',
      url: '/api/v1/licenses/:key/activations/:id?limit=5',
      ids: { id: 'act_1' },
      account_id: 'acct_A',
      key_id: 'key_B',
      status: 201,
      ms: 1.235,
      msg: 'request',
    });
    expect(line).not.toContain(KEY);
  });

  it('never writes a secret of the URL, and stays one valid line whatever the path holds', () => {
    const paths = [
      `/api/v1/licenses/validate?license_key=${KEY}&x=1`,
      `/nowhere/${KEY.toLowerCase()}?token=abc"def`,
      '/x?email=a%40b.co',
      '/"quoted"\\path\u2028',
      '/api/v1/lk_full_abcdef123456',
      // An imported key has no native shape: the dashboard's path is redacted by where the key sits.
      '/dashboard/licenses/7k3qf-imported-9xw2m/reroll',
    ];
    for (const url of paths) {
      const line = accessLine({ requestId: 'r', method: 'GET', url, status: 404, startedNs: 0n }, 'gateway', TIME, 0n);
      const parsed = JSON.parse(line) as { url: string; account_id?: string };
      expect(parsed.url).not.toMatch(/7K3QF|7k3qf|abc"def|a%40b|lk_full_/);
      expect(parsed.account_id).toBeUndefined(); // no caller: no account fields
      expect(line.indexOf('\n')).toBe(line.length - 1);
    }
  });
});

describe('the access log', () => {
  it('writes a line per request at info and below, none above, and flushes its sink on request', () => {
    const sink = memorySink();
    const log = new AccessLog('gateway', 'info', sink);
    log.record({ requestId: 'r1', method: 'GET', url: '/healthz', status: 200, startedNs: process.hrtime.bigint() });
    log.flush();
    expect(sink.lines).toHaveLength(1);
    expect(sink.flushes()).toBe(1);
    const quiet = memorySink();
    const off = new AccessLog('gateway', 'warn', quiet);
    expect(off.enabled).toBe(false);
    off.record({ requestId: 'r1', method: 'GET', url: '/healthz', status: 200, startedNs: 0n });
    off.flush();
    expect(quiet.lines).toHaveLength(0);
  });
});

describe('query redaction, a scan', () => {
  const { redactUrl } = jest.requireActual<typeof import('../../src/observability/access-log')>(
    '../../src/observability/access-log',
  );
  /** The regex it replaced: the scan must agree with it on every input. */
  const byRegex = (url: string) =>
    url.replace(/([?&](?:license_key|key|q|customer_email|email|token|secret|password)=)[^&#]*/gi, '$1[redacted]');

  it('agrees with the regex it replaced on edge cases and on random URLs', () => {
    const cases = [
      '/x',
      '/x?',
      '/x?key',
      '/x?key=',
      '/x?key=a#frag&token=b',
      '/x?a=1?token=s',
      '/x?&&key=1&',
      '/x?KEY=1&Email=a%40b',
      '/x?keys=1&akey=2',
      '/x#h?key=1',
    ];
    const alphabet = ['?', '&', '=', '#', 'key', 'token', 'q', 'x', 'Q', '1', '%40', 'EMAIL'];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let i = 0; i < 5000; i++) {
      let url = '/p';
      for (let j = next() % 12; j > 0; j--) url += alphabet[next() % alphabet.length];
      cases.push(url);
    }
    for (const url of cases) expect([url, redactUrl(url)]).toEqual([url, byRegex(url)]);
  });
});
