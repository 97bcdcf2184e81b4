import { addressKey } from '@licensing/runtime';

// The key a per-address throttle counts a client under (packages/runtime client-address.ts).

describe('addressKey', () => {
  it.each([
    ['192.0.2.7', '192.0.2.7'],
    ['::ffff:192.0.2.7', '192.0.2.7'],
    ['::FFFF:192.0.2.7', '192.0.2.7'],
    ['::ffff:c000:207', '192.0.2.7'],
    ['0:0:0:0:0:ffff:c000:0207', '192.0.2.7'],
    ['2001:db8:1:2::a', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:db8:0:0:1::', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.7', '64:ff9b:0:0::/64'],
  ])('%s → %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });

  it('keeps what is not an address as its own key, and names an absent one', () => {
    expect(addressKey(undefined)).toBe('unknown');
    expect(addressKey('')).toBe('unknown');
    expect(addressKey('not-an-ip')).toBe('not-an-ip');
    expect(addressKey('2001:db8:::1')).toBe('2001:db8:::1');
    expect(addressKey('x'.repeat(100))).toHaveLength(64);
  });

  it('gives every address of one /64 the same key, and neighbouring /64s different ones', () => {
    const keys = new Set(['2001:db8:1:2::1', '2001:db8:1:2:abcd::9', '2001:db8:1:2:1:2:3:4'].map(addressKey));
    expect([...keys]).toEqual(['2001:db8:1:2::/64']);
    expect(addressKey('2001:db8:1:3::1')).not.toBe(addressKey('2001:db8:1:2::1'));
  });
});
