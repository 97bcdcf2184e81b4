import { pageIndexes, pageSql, sqlWhere, unusedByFerretdb } from '@licensing/runtime';

// The MongoDB-filter-to-SQL subset used for pages and counts over FerretDB's
// PostgreSQL tables (runtime/src/postgres). Its results are checked against
// FerretDB itself in packages/runtime/test/component/postgres-pages.test.ts; here, its shape.

describe('sqlWhere', () => {
  it('equalities compare jsonb values, with parameters (never inlined values)', () => {
    const params: unknown[] = [];
    expect(sqlWhere({ account_id: "acct_'x", n: 3, ok: true }, params)).toBe(
      "(_jsonb -> 'account_id') = $1::jsonb AND (_jsonb -> 'n') = $2::jsonb AND (_jsonb -> 'ok') = $3::jsonb",
    );
    expect(params).toEqual(['"acct_\'x"', '3', 'true']);
  });

  it('null means null or missing, as in MongoDB', () => {
    expect(sqlWhere({ f: null }, [])).toBe("((_jsonb -> 'f') IS NULL OR (_jsonb -> 'f') = 'null'::jsonb)");
  });

  it('dates are compared as the milliseconds FerretDB stores, strings in byte order', () => {
    const params: unknown[] = [];
    const at = new Date('2026-01-01T00:00:00Z');
    const sql = sqlWhere({ ends: { $lte: at }, _id: { $lt: 'lic_B' } }, params)!;
    expect(sql).toContain("THEN ((_jsonb -> 'ends'))::numeric <= $1");
    expect(sql).toContain(`((_jsonb ->> '_id') COLLATE "C") < $2`);
    expect(params).toEqual([at.getTime(), 'lic_B']);
  });

  it('$or and $and become parenthesised groups', () => {
    expect(sqlWhere({ $or: [{ a: 'x' }, { b: null }] }, [])).toBe(
      "((_jsonb -> 'a') = $1::jsonb OR ((_jsonb -> 'b') IS NULL OR (_jsonb -> 'b') = 'null'::jsonb))",
    );
  });

  it.each([
    [{ a: { $in: ['x'] } }],
    [{ a: { $exists: true } }],
    [{ 'a.b': 'x' }],
    [{ "a'; DROP TABLE x; --": 'x' }],
    [{ a: ['x'] }],
    [{ a: /x/ }],
    [{ $nor: [{ a: 'x' }] }],
    [{ $or: [] }],
    [{ a: { $lt: null } }],
  ])('%j is not translated (FerretDB answers it instead)', (filter) => {
    expect(sqlWhere(filter as Record<string, unknown>, [])).toBeNull();
  });
});

describe('page queries', () => {
  it('order by the id in byte order, newest first, with the limit as a parameter', () => {
    const sql = pageSql('db', 'things_1', { account_id: 'a' }, 21)!;
    expect(sql.text).toBe(
      `SELECT _jsonb->>'_id' AS id FROM "db"."things_1" WHERE (_jsonb -> 'account_id') = $1::jsonb ORDER BY ((_jsonb ->> '_id') COLLATE "C") DESC LIMIT $2`,
    );
    expect(sql.params).toEqual(['"a"', 21]);
  });

  it('a page index for each declared newest-first index (ending with _id: -1)', () => {
    expect(
      pageIndexes([
        [{ account_id: 1, _id: -1 }, {}],
        [{ account_id: 1, product_id: 1, _id: -1 }, {}],
        [{ key: 1 }, { unique: true }],
        [{ _id: 1 }, {}],
        [{ outbox_pending: 1, _id: 1 }, {}],
      ]),
    ).toEqual([
      ['account_id', '_id'],
      ['account_id', 'product_id', '_id'],
    ]);
  });
});

describe('indexes FerretDB would keep up without using', () => {
  it('every declared index but the unique ones (their constraint is relied on)', () => {
    expect(unusedByFerretdb({})).toBe(true);
    expect(unusedByFerretdb({ expireAfterSeconds: 60 })).toBe(true);
    expect(unusedByFerretdb({ unique: true })).toBe(false);
  });
});
