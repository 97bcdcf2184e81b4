import { shapeOf } from '@licensing/runtime';
import { covers, uncovered, type Index } from '../../scripts/lib/index-coverage';

// The rule npm test applies to every query shape the services sent during the run.
describe('index coverage', () => {
  const byAccount: Index = [
    ['account_id', 1],
    ['_id', -1],
  ];

  it('reads equality, range and sort from a mongo filter', () => {
    expect(
      shapeOf(
        'licenses',
        'find',
        { account_id: 'a', _id: { $lt: 'x' }, $or: [{ grace_ends_at: null }, { grace_ends_at: { $gt: new Date() } }] },
        { _id: -1 },
      ),
    ).toEqual({
      collection: 'licenses',
      method: 'find',
      filter: { account_id: 'eq', _id: 'range', grace_ends_at: 'range' },
      sort: [['_id', -1]],
    });
  });

  it('serves equality prefixes followed by the sort, in either direction', () => {
    expect(covers(byAccount, shapeOf('l', 'find', { account_id: 'a' }, { _id: -1 }))).toBe(true);
    expect(covers(byAccount, shapeOf('l', 'find', { account_id: 'a', _id: { $lt: 'x' } }, { _id: 1 }))).toBe(true);
    expect(covers(byAccount, shapeOf('l', 'find', { account_id: 'a' }, { created_at: -1 }))).toBe(false);
    expect(covers(byAccount, shapeOf('l', 'find', { product_id: 'p' }))).toBe(false);
    expect(
      covers(
        [
          ['a', 1],
          ['b', 1],
          ['c', 1],
        ],
        shapeOf('l', 'find', { b: 1, a: 2 }, { c: -1 }),
      ),
    ).toBe(true);
  });

  it('an _id equality is always served, and a range alone must lead an index', () => {
    expect(covers([['x', 1]], shapeOf('l', 'updateOne', { _id: 'lic_1', status: 'active' }))).toBe(true);
    expect(covers([['expiry_bucket', 1]], shapeOf('l', 'find', { expiry_bucket: { $exists: false } }))).toBe(true);
    expect(covers([['status', 1]], shapeOf('l', 'find', { grace_ends_at: { $lte: new Date() } }))).toBe(false);
  });

  it('lists what no declared index of the collection serves', () => {
    const shapes = [
      shapeOf('licenses', 'find', { account_id: 'a' }, { _id: -1 }),
      shapeOf('licenses', 'find', { customer_email: 'e' }),
      shapeOf('other', 'find', {}, { _id: 1 }),
    ];
    expect(uncovered(shapes, new Map([['licenses', [byAccount]]]))).toEqual([shapes[1]]);
  });
});
