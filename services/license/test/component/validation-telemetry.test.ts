import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import {
  addPostgresIndexes,
  connectMongo,
  createLogger,
  postgresPagesOf,
  syncIndexes,
  unusedByFerretdb,
  usePostgresPages,
} from '@licensing/runtime';
import { licenseModels } from '../../src/store/models';
import { LicenseStore } from '../../src/store/queries';
import { statsModels, ValidationStatsStore } from '../../src/store/stats';

// The stored validation telemetry stays bounded on the default store (FerretDB, which keeps TTL
// indexes but never deletes through them): a machine's sighting is stored only for an active
// activation of its licence, and the clean-up deletes recent-validation groups and hourly counts past
// their retention, whatever else is stored.

const postgresUrl = process.env.TEST_FERRETDB_POSTGRESQL_URL;
const log = createLogger('test', 'silent');
const DAY = 86_400_000;
const now = new Date();
let db: Connection;
let models: ReturnType<typeof licenseModels> & ReturnType<typeof statsModels>;

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_telemetry_${randomBytes(3).toString('hex')}`);
  models = { ...licenseModels(db), ...statsModels(db) };
  await syncIndexes(db, postgresUrl ? unusedByFerretdb : undefined);
  if (postgresUrl) {
    await addPostgresIndexes(db, postgresUrl, log);
    usePostgresPages(db, postgresUrl, log);
  }
});

afterAll(async () => {
  await postgresPagesOf(db)?.close();
  await db?.dropDatabase();
  await db?.close();
});

const activation = (id: string, fingerprint: string, active: boolean) => ({
  _id: id,
  license_id: 'lic_seen',
  account_id: 'acct_seen',
  fingerprint,
  name: '',
  slot_key: active ? id : `freed:${id}`,
  fingerprint_key: active ? fingerprint : `freed:${id}`,
  created_at: now,
  deactivated_at: active ? null : now,
});

it('stores a sighting only for a fingerprint that is an active activation of its licence', async () => {
  await models.Activation.insertMany([activation('act_on', 'laptop', true), activation('act_off', 'old-pc', false)]);
  const store = new LicenseStore(models);
  await store.markSeen(
    new Map([
      [
        'lic_seen',
        new Map([
          ['laptop', now],
          ['old-pc', now],
          ['random-0f3a', now],
        ]),
      ],
      ['lic_unknown', new Map([['random-77c1', now]])],
    ]),
  );
  const stored = await models.Sighting.find({}).lean().exec();
  expect(stored.map((s) => [s.license_id, s.fingerprint])).toEqual([['lic_seen', 'laptop']]);
  expect(stored[0].last_seen_at.getTime()).toBe(now.getTime());
});

it('deletes recent-validation groups and hourly counts past their retention, and keeps the rest', async () => {
  const group = (id: string, hour: Date) => ({
    _id: id,
    account_id: 'acct_seen',
    license_id: 'lic_seen',
    hour,
    code: 'valid',
    fingerprint: '',
    count: 1,
    last_at: hour,
  });
  await models.RecentGroups.insertMany([
    group('grp_old', new Date(now.getTime() - 15 * DAY)),
    group('grp_older', new Date(now.getTime() - 40 * DAY)),
    group('grp_new', new Date(now.getTime() - 13 * DAY)),
  ]);
  const hours = (id: string, hour: Date) => ({ _id: id, account_id: 'acct_seen', hour, validations: 1, valid: 1 });
  await models.Stats.insertMany([
    hours('hr_old', new Date(now.getTime() - 91 * DAY)),
    hours('hr_new', new Date(now.getTime() - 89 * DAY)),
  ]);
  const stats = new ValidationStatsStore(models);
  expect(await stats.deleteExpired(now, 1)).toBe(2); // at most one of each per call
  expect(await stats.deleteExpired(now, 100)).toBe(1);
  expect(await stats.deleteExpired(now, 100)).toBe(0);
  expect((await models.RecentGroups.find({}).lean().exec()).map((g) => g._id)).toEqual(['grp_new']);
  expect((await models.Stats.find({}).lean().exec()).map((h) => h._id)).toEqual(['hr_new']);
});
