import type { QueryShape } from '@licensing/runtime';

// Whether a MongoDB index serves a query shape without a collection scan or
// an in-memory sort of what it matched: the index starts with fields the query
// fixes by equality (as many as it has, in any order; further equality and
// range fields are then checked on the narrowed set, as MongoDB does), the sort
// follows right after them in order (or exactly reversed), and a query with no
// equality starts the index with the sort or one of its range fields. An
// equality on _id is always served (the primary key, which every collection has).

export type Index = Array<[string, 1 | -1]>;

export function covers(index: Index, shape: QueryShape): boolean {
  const eq = Object.keys(shape.filter).filter((f) => shape.filter[f] === 'eq');
  const range = Object.keys(shape.filter).filter((f) => shape.filter[f] === 'range');
  if (eq.includes('_id')) return true;
  const keys = index.map(([k]) => k);
  let bound = 0;
  while (bound < keys.length && eq.includes(keys[bound])) bound++;
  if (eq.length && bound === 0) return false;
  const rest = index.slice(bound);
  const sort = shape.sort.filter(([f]) => !eq.includes(f)); // sorting on a field fixed by the filter costs nothing
  if (sort.length) {
    if (rest.length < sort.length) return false;
    const same = sort.every(([f, d], i) => rest[i][0] === f && rest[i][1] === d);
    const reversed = sort.every(([f, d], i) => rest[i][0] === f && rest[i][1] === -d);
    return same || reversed;
  }
  if (!eq.length) return range.includes(keys[0]);
  return true;
}

/**
 * Stricter, for the lists a caller filters (a page, newest first): every equality leads the index, then
 * the sort. With only the first equality leading, a page walks all of its entries in order and checks
 * the rest document by document: the few suspended licences of an account with 100,000 would cost a
 * read of the account's whole index for one page.
 */
export function servesPage(index: Index, shape: QueryShape): boolean {
  const eq = Object.keys(shape.filter).filter((f) => shape.filter[f] === 'eq' && f !== '_id');
  const leading = index.slice(0, eq.length).map(([k]) => k);
  return eq.every((f) => leading.includes(f)) && covers(index, shape);
}

/** The shapes no declared index of their collection serves (with the implicit _id index). */
export function uncovered(shapes: QueryShape[], declared: Map<string, Index[]>): QueryShape[] {
  return shapes.filter(
    (s) => ![[['_id', 1]] as Index, ...(declared.get(s.collection) ?? [])].some((i) => covers(i, s)),
  );
}
