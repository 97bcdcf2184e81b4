import { VENDOR_CACHE_MS, VendorCache } from '../../src/portal/vendors';

// The customer portal's vendors: each account (or that there is none) is looked up once a minute,
// however many pages are asked, and look-ups of one account at the same moment are one call.

function setUp() {
  let now = 1_000_000;
  const asked: string[] = [];
  let answer: (id: string) => Promise<{ id: string; name: string } | null> = async (id) =>
    id === 'acct_known' ? { id, name: 'Acme' } : null;
  const cache = new VendorCache(
    (id) => {
      asked.push(id);
      return answer(id);
    },
    () => now,
  );
  /** The vendor as the portal gets it: remembered, or looked up and remembered. */
  const vendorOf = async (id: string) => {
    const known = cache.cached(id);
    return known === undefined ? cache.lookUpAndRemember(id) : known;
  };
  return {
    cache,
    asked,
    vendorOf,
    advance: (ms: number) => {
      now += ms;
    },
    answerWith: (f: typeof answer) => {
      answer = f;
    },
  };
}

it('remembers a vendor for a minute: one look-up however many requests, then a fresh one', async () => {
  const s = setUp();
  expect(s.cache.cached('acct_known')).toBeUndefined();
  for (let i = 0; i < 20; i++) expect(await s.vendorOf('acct_known')).toEqual({ id: 'acct_known', name: 'Acme' });
  expect(s.asked).toEqual(['acct_known']);
  s.advance(VENDOR_CACHE_MS - 1);
  await s.vendorOf('acct_known');
  expect(s.asked).toHaveLength(1);
  s.advance(1);
  await s.vendorOf('acct_known');
  expect(s.asked).toHaveLength(2);
});

it('remembers that an account does not exist for a minute too', async () => {
  const s = setUp();
  for (let i = 0; i < 20; i++) expect(await s.vendorOf('acct_madeup')).toBeNull();
  expect(s.cache.cached('acct_madeup')).toBeNull();
  expect(s.asked).toEqual(['acct_madeup']);
});

it('look-ups of one account at the same moment share one call; a failed look-up is not remembered', async () => {
  const s = setUp();
  let release!: () => void;
  s.answerWith((id) => new Promise((resolve) => (release = () => resolve({ id, name: 'Slow' }))));
  const together = Promise.all(Array.from({ length: 5 }, () => s.vendorOf('acct_slow')));
  release();
  expect(new Set((await together).map((v) => v?.name))).toEqual(new Set(['Slow']));
  expect(s.asked).toEqual(['acct_slow']);

  s.answerWith(async () => {
    throw new Error('account service away');
  });
  await expect(s.vendorOf('acct_down')).rejects.toThrow('away');
  expect(s.cache.cached('acct_down')).toBeUndefined();
});
