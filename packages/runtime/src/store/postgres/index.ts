// FerretDB over PostgreSQL, the development store: the one place that makes it
// use indexes (indexes.ts, pages.ts, sql-filter.ts). Nothing here runs against MongoDB.
export { addPostgresIndexes, indexedFields, pageIndexes, rangeFields, unusedByFerretdb } from './indexes';
export {
  PostgresPages,
  countSql,
  deleteBelowSql,
  fieldAmongSql,
  idsAmongSql,
  pageSql,
  postgresPagesOf,
  usePostgresPages,
} from './pages';
export { sqlWhere } from './sql-filter';
export { clearOutboxSql, pendingIdsSql, pendingIndexSql, type Published } from './outbox-clear';
export { ferretTables, stampSql, stampWithPostgres } from './stamp';
