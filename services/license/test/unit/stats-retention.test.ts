import mongoose from 'mongoose';
import { RECENT_RETENTION_DAYS, STATS_RETENTION_DAYS, statsModels } from '../../src/store/stats';

// The dashboard's counts do not grow forever: both collections carry a TTL index
// on their hour (MongoDB removes what is older; syncIndexes keeps a plain index on FerretDB).
it('hourly counts and recent validations expire after their retention', () => {
  const conn = mongoose.createConnection();
  const { Stats, RecentGroups } = statsModels(conn);
  const ttlOf = (schema: mongoose.Schema) =>
    schema
      .indexes()
      .filter(([fields]) => Object.keys(fields).join() === 'hour')
      .map(([, options]) => options.expireAfterSeconds);
  expect(ttlOf(Stats.schema)).toEqual([STATS_RETENTION_DAYS * 86_400]);
  expect(ttlOf(RecentGroups.schema)).toEqual([RECENT_RETENTION_DAYS * 86_400]);
  expect(STATS_RETENTION_DAYS).toBeGreaterThan(30); // the overview's 30 days are always there
});
