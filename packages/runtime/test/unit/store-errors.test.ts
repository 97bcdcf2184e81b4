import {
  MongoNetworkError,
  MongoNetworkTimeoutError,
  MongoNotConnectedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from 'mongodb';
import mongoose from 'mongoose';
import { DatabaseError } from 'pg';
import { AppError, isStoreUnavailable } from '@licensing/runtime';

// Which errors mean "the store is away, retry later" (503) and which stay bugs (500).

/** What FerretDB 1.24 answers with its PostgreSQL connection cut (messages as measured, with its call-site prefixes). */
const ferretdb = (errmsg: string, code = 1, codeName = 'InternalError') =>
  new MongoServerError({ ok: 0, errmsg, code, codeName });

describe('store unavailable (503)', () => {
  it.each([
    [
      'FerretDB: PostgreSQL refuses connections',
      ferretdb(
        '[msg_insert.go:168 handler.(*Handler).MsgInsert] failed to connect to `host=127.0.0.1 user=postgres database=licensing`: dial error (dial tcp 127.0.0.1:5432: connect: connection refused)',
      ),
    ],
    [
      'FerretDB: the connection reset while connecting',
      ferretdb(
        '[msg_find.go:344 handler.handleMaxTimeMSError] [collection.go:109 postgresql.(*collection).Query] failed to connect to `user=postgres database=h1exp`:\n\t127.0.0.1:34317 (127.0.0.1): tls error: read tcp 127.0.0.1:45696->127.0.0.1:34317: read: connection reset by peer',
      ),
    ],
    [
      'FerretDB: a pooled connection broke mid-query',
      ferretdb(
        '[msg_update.go:133 handler.(*Handler).updateDocument] [update.go:59 common.UpdateDocument] [filter_iterator.go:52 common.(*filterIterator).Next] [query_iterator.go:92 postgresql.(*queryIterator).Next] unexpected EOF',
      ),
    ],
    [
      'FerretDB: PostgreSQL shutting down',
      ferretdb('[msg_find.go:344] FATAL: terminating connection due to administrator command (SQLSTATE 57P01)'),
    ],
    ['MongoDB: a network error', new MongoNetworkError('connection 3 to 10.0.0.5:27017 closed')],
    ['MongoDB: a network timeout', new MongoNetworkTimeoutError('connection timed out')],
    [
      'MongoDB: no server selectable',
      // The driver's reason: the topology it saw (only its error is read here).
      new MongoServerSelectionError('connect ECONNREFUSED 10.0.0.5:27017', { error: undefined } as never),
    ],
    ['MongoDB: client not connected', new MongoNotConnectedError('client must be connected')],
    ['MongoDB: topology closed', new MongoTopologyClosedError()],
    [
      'MongoDB: failover, NotWritablePrimary',
      new MongoServerError({ ok: 0, errmsg: 'not primary', code: 10107, codeName: 'NotWritablePrimary' }),
    ],
    [
      'MongoDB: failover, PrimarySteppedDown',
      new MongoServerError({ ok: 0, errmsg: 'stepped down', code: 189, codeName: 'PrimarySteppedDown' }),
    ],
    [
      'MongoDB: ShutdownInProgress',
      new MongoServerError({ ok: 0, errmsg: 'shutting down', code: 91, codeName: 'ShutdownInProgress' }),
    ],
    [
      'MongoDB: labelled RetryableWriteError',
      new MongoServerError({ ok: 0, errmsg: 'x', code: 999, errorLabels: ['RetryableWriteError'] }),
    ],
    [
      'mongoose: server selection at its level',
      Object.assign(new mongoose.Error.MongooseServerSelectionError('could not connect'), {}),
    ],
    [
      'PostgreSQL page query: refused',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    ],
    ['PostgreSQL page query: terminated', new Error('Connection terminated unexpectedly')],
    [
      'PostgreSQL page query: admin shutdown',
      Object.assign(new DatabaseError('terminating connection', 0, 'error'), { code: '57P01' }),
    ],
  ])('%s', (_what, err) => {
    expect(isStoreUnavailable(err)).toBe(true);
  });
});

describe('not unavailability (a bug stays 500, the rest keeps its own answer)', () => {
  it.each([
    ['a duplicate key', new MongoServerError({ ok: 0, errmsg: 'E11000 duplicate key error', code: 11000 })],
    ['FerretDB: another internal error', ferretdb('[msg_update.go:90] unexpected type *types.Array')],
    ['FerretDB: not implemented', ferretdb('sparse is not implemented', 238, 'NotImplemented')],
    ['MaxTimeMSExpired (a deadline, mapped on its own)', new MongoServerError({ ok: 0, errmsg: 'x', code: 50 })],
    ['a bad value', new MongoServerError({ ok: 0, errmsg: 'x', code: 2, codeName: 'BadValue' })],
    ['an AppError', new AppError('not_found', 'licence not found')],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['a plain error', new Error('boom')],
    ['a syntax error in SQL', Object.assign(new DatabaseError('syntax error', 0, 'error'), { code: '42601' })],
    ['nothing', undefined],
    ['a string', 'connection refused'],
  ])('%s', (_what, err) => {
    expect(isStoreUnavailable(err)).toBe(false);
  });
});
