import { pageInOrder, pageLimit } from '../../src/store/pagination';

// Paging a list held in memory in an order of its own (a product's releases, newest version first)
// with the cursor every list has: the id of the previous page's last item.

const ordered = ['e', 'd', 'c', 'b', 'a'].map((id, i) => ({ id, even: i % 2 === 0 }));
const idOf = (item: { id: string }) => item.id;
const ids = (found: ReturnType<typeof pageInOrder<{ id: string }>>) => found?.items.map(idOf);

it('takes the page size every list takes: 20 unless given, from 1 to 100', () => {
  expect([
    pageLimit(undefined),
    pageLimit({ limit: 0, starting_after: '' }),
    pageLimit({ limit: 500, starting_after: '' }),
  ]).toEqual([20, 20, 100]);
  expect(pageLimit({ limit: -3, starting_after: '' })).toBe(1);
});

it('pages in the list’s order, the cursor the last id of the page before', () => {
  const first = pageInOrder(ordered, idOf, { limit: 2, starting_after: '' });
  expect([ids(first), first?.page]).toEqual([['e', 'd'], { has_more: true, next_cursor: 'd' }]);
  const second = pageInOrder(ordered, idOf, { limit: 2, starting_after: 'd' });
  expect([ids(second), second?.page]).toEqual([['c', 'b'], { has_more: true, next_cursor: 'b' }]);
  const last = pageInOrder(ordered, idOf, { limit: 2, starting_after: 'b' });
  expect([ids(last), last?.page]).toEqual([['a'], { has_more: false, next_cursor: '' }]);
  // A page that ends the list exactly has no more after it.
  expect(pageInOrder(ordered, idOf, { limit: 5, starting_after: '' })?.page.has_more).toBe(false);
});

it('filters after finding the cursor in the whole list, so an item that left the filter still marks the place', () => {
  const even = (item: { even: boolean }) => item.even;
  expect(ids(pageInOrder(ordered, idOf, { limit: 1, starting_after: '' }, even))).toEqual(['e']);
  // 'd' is not even, but the page after it is still the even items after it.
  expect(ids(pageInOrder(ordered, idOf, { limit: 5, starting_after: 'd' }, even))).toEqual(['c', 'a']);
});

it('says so (undefined) for a cursor that is in no place of the list', () => {
  expect(pageInOrder(ordered, idOf, { limit: 2, starting_after: 'gone' })).toBeUndefined();
});
