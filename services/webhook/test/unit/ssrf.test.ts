import { blockedAddress, checkWebhookUrl, type Lookup } from '../../src/domain/ssrf';
import { checkEvents } from '../../src/domain/endpoint';
import { publicError } from '../../src/jobs/sender';

const strict = { httpsOnly: true, allowLoopback: false };
const dev = { httpsOnly: false, allowLoopback: true };
const dns: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34'],
  'internal.example.com': ['10.1.2.3'],
  'sneaky.example.com': ['93.184.216.34', '169.254.169.254'],
  'v6.example.com': ['fd00::1'],
};
const lookup: Lookup = async (host) => dns[host] ?? [];

describe('webhook URLs (SSRF)', () => {
  it('accepts a public https URL', async () => {
    expect(await checkWebhookUrl('https://hooks.example.com/in', strict, lookup)).toBe('https://hooks.example.com/in');
  });

  it.each([
    ['http://127.0.0.1/hook', 'https'],
    ['https://127.0.0.1/hook', 'public address'],
    ['https://[::1]/hook', 'public address'],
    ['https://169.254.169.254/latest/meta-data', 'public address'],
    ['https://10.0.0.1/hook', 'public address'],
    ['https://192.168.1.10/hook', 'public address'],
    ['https://172.20.0.5/hook', 'public address'],
    ['https://100.64.0.1/hook', 'public address'],
    ['https://[::ffff:10.0.0.1]/hook', 'public address'],
    ['https://[::ffff:7f00:1]/hook', 'public address'],
    ['https://internal.example.com/hook', 'public address'],
    ['https://sneaky.example.com/hook', 'public address'],
    ['https://v6.example.com/hook', 'public address'],
    ['https://nowhere.example.com/hook', 'does not resolve'],
    ['ftp://hooks.example.com/hook', 'https'],
    ['http://hooks.example.com/hook', 'https'],
    ['https://user:pw@hooks.example.com/hook', 'credentials'],
    ['not a url', 'absolute URL'],
  ])('refuses %s (%s) in production', async (url, why) => {
    await expect(checkWebhookUrl(url, strict, lookup)).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining(why),
    });
  });

  it.each([
    '64:ff9b::a00:1',
    '64:ff9b::127.0.0.1',
    '64:ff9b::169.254.169.254',
    '64:ff9b:1::1', // NAT64
    '::7f00:1',
    '::127.0.0.1',
    '::a00:1',
    '::8.8.8.8', // IPv4-compatible (deprecated: never public)
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:0:a00:1',
    '0:0:0:0:0:ffff:169.254.169.254', // mapped, translated
    '2002:7f00:1::',
    '2002:a00:1::1',
    '2002:a9fe:a9fe::', // 6to4 around private IPv4
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '2001:db8::1',
    '2001:10::1', // Teredo, documentation, ORCHID
    'fec0::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::',
    '::1',
    '100::1',
    '4000::1',
    '192.0.2.1',
    '198.51.100.7',
    '203.0.113.9',
    '255.255.255.255',
    '0.0.0.0',
  ])('refuses %s, and every form of IPv4 embedded in IPv6', (ip) => {
    expect(blockedAddress(ip, strict)).not.toBeNull();
  });

  it.each([
    '93.184.216.34',
    '2606:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:93.184.216.34',
    '64:ff9b::93.184.216.34',
    '2002:5db8:d822::1',
  ])('accepts the public unicast %s', (ip) => {
    expect(blockedAddress(ip, strict)).toBeNull();
  });

  it('never shows what a name resolved to, or what kind of address it is', async () => {
    for (const url of [
      'https://internal.example.com/hook',
      'https://sneaky.example.com/hook',
      'https://v6.example.com/hook',
      'https://[::7f00:1]/hook',
      'https://[64:ff9b::a00:1]/',
    ]) {
      const err = await checkWebhookUrl(url, strict, lookup).catch((e: Error) => e);
      expect((err as Error).message).toBe('url must point to a public address');
    }
  });

  it('delivery errors name what happened, never an address', () => {
    expect(publicError(Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:443'), { code: 'ECONNREFUSED' }))).toBe(
      'connection refused',
    );
    expect(publicError(new Error('socket hang up near 10.1.2.3:8443 and [fd00::1]:443'))).toBe(
      'socket hang up near [address] and [address]',
    );
  });

  it('allows loopback, and only loopback, with the explicit development setting', async () => {
    expect(await checkWebhookUrl('http://127.0.0.1:9999/hook', dev, lookup)).toBe('http://127.0.0.1:9999/hook');
    await expect(checkWebhookUrl('http://10.0.0.1/hook', dev, lookup)).rejects.toMatchObject({
      code: 'invalid_request',
    });
    expect(blockedAddress('169.254.169.254', dev)).toMatch(/link-local/);
  });
});

describe('event subscriptions', () => {
  it('accept known types and "*", and name the valid ones for an unknown type', () => {
    expect(checkEvents(['license.created', 'license.created', 'checkout.completed'])).toEqual([
      'license.created',
      'checkout.completed',
    ]);
    expect(checkEvents(['*'])).toEqual(['*']);
    expect(() => checkEvents(['license.exploded'])).toThrow(
      /unknown event type\(s\) license.exploded; valid: .*license.created/,
    );
    expect(() => checkEvents([])).toThrow(/at least one/);
    expect(() => checkEvents(['*', 'license.created'])).toThrow(/already means every event/);
  });
});
