import { blockedAddress, checkWebhookUrl, type Lookup } from '../../services/webhook/src/domain/ssrf';
import { checkEvents } from '../../services/webhook/src/domain/endpoint';

const strict = { httpsOnly: true, allowLoopback: false };
const dev = { httpsOnly: false, allowLoopback: true };
const dns: Record<string, string[]> = { 'hooks.example.com': ['93.184.216.34'], 'internal.example.com': ['10.1.2.3'], 'sneaky.example.com': ['93.184.216.34', '169.254.169.254'], 'v6.example.com': ['fd00::1'] };
const lookup: Lookup = async (host) => dns[host] ?? [];

describe('webhook URLs (SSRF)', () => {
  it('accepts a public https URL', async () => {
    expect(await checkWebhookUrl('https://hooks.example.com/in', strict, lookup)).toBe('https://hooks.example.com/in');
  });

  it.each([
    ['http://127.0.0.1/hook', 'https'],
    ['https://127.0.0.1/hook', 'loopback'],
    ['https://[::1]/hook', 'loopback'],
    ['https://169.254.169.254/latest/meta-data', 'link-local'],
    ['https://10.0.0.1/hook', 'private'],
    ['https://192.168.1.10/hook', 'private'],
    ['https://172.20.0.5/hook', 'private'],
    ['https://100.64.0.1/hook', 'carrier-grade NAT'],
    ['https://[::ffff:10.0.0.1]/hook', 'private'],
    ['https://[::ffff:7f00:1]/hook', 'loopback'],
    ['https://internal.example.com/hook', 'private'],
    ['https://sneaky.example.com/hook', 'link-local'],
    ['https://v6.example.com/hook', 'unique local'],
    ['https://nowhere.example.com/hook', 'does not resolve'],
    ['ftp://hooks.example.com/hook', 'https'],
    ['http://hooks.example.com/hook', 'https'],
    ['https://user:pw@hooks.example.com/hook', 'credentials'],
    ['not a url', 'absolute URL'],
  ])('refuses %s (%s) in production', async (url, why) => {
    await expect(checkWebhookUrl(url, strict, lookup)).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringContaining(why) });
  });

  it('allows loopback, and only loopback, with the explicit development setting', async () => {
    expect(await checkWebhookUrl('http://127.0.0.1:9999/hook', dev, lookup)).toBe('http://127.0.0.1:9999/hook');
    await expect(checkWebhookUrl('http://10.0.0.1/hook', dev, lookup)).rejects.toMatchObject({ code: 'invalid_request' });
    expect(blockedAddress('169.254.169.254', dev)).toMatch(/link-local/);
  });
});

describe('event subscriptions', () => {
  it('accept known types and "*", and name the valid ones for an unknown type', () => {
    expect(checkEvents(['license.created', 'license.created', 'checkout.completed'])).toEqual(['license.created', 'checkout.completed']);
    expect(checkEvents(['*'])).toEqual(['*']);
    expect(() => checkEvents(['license.exploded'])).toThrow(/unknown event type\(s\) license.exploded; valid: .*license.created/);
    expect(() => checkEvents([])).toThrow(/at least one/);
    expect(() => checkEvents(['*', 'license.created'])).toThrow(/already means every event/);
  });
});
