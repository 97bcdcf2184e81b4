import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import { connectMongo } from '@licensing/runtime';
import { ValidationStatsStore, statsModels } from '../../src/store/stats';

// Writes whose count follows the traffic, against real FerretDB: a flush of the validation counts
// names every licence validated since the last one, and FerretDB 1.24 stalls every client of the
// store on an update command of more than about fifty statements (runtime's bulk-updates.ts). Without
// the split into commands of MAX_UPDATES_PER_COMMAND, the first update below never answers (and
// the read beside it waits too), and jest's timeout fails the test.
const id = randomBytes(3).toString('hex');
let db: Connection;
let reader: Connection;
let stats: ValidationStatsStore;

beforeAll(async () => {
  db = await connectMongo(process.env.TEST_MONGO_URL!, `t_bulk_${id}`);
  reader = await connectMongo(process.env.TEST_MONGO_URL!, `t_bulk_${id}`);
  stats = new ValidationStatsStore(statsModels(db));
});

afterAll(async () => {
  await db?.dropDatabase().catch(() => undefined);
  await db?.close();
  await reader?.close();
});

const LICENCES = 600;
const lastValidated = (at: Date) =>
  new Map(Array.from({ length: LICENCES }, (_, i) => [`lic_${id}_${i}`, { accountId: 'acct_bulk', at }]));

it(`stores a flush that names ${LICENCES} licences, twice (upserts of new, then of existing documents), while the store keeps answering`, async () => {
  const first = new Date('2026-03-01T10:00:00Z');
  await stats.setLastValidated(lastValidated(first));
  const second = new Date('2026-03-01T10:00:05Z');
  // The second flush updates documents that exist (what stalled FerretDB); a read on another
  // connection meanwhile answers.
  const [, read] = await Promise.all([
    stats.setLastValidated(lastValidated(second)),
    reader.collection('validation_activity').countDocuments({}),
  ]);
  expect(read).toBeGreaterThanOrEqual(0);
  expect(await stats.lastValidatedAt(`lic_${id}_0`)).toEqual(second);
  expect(await stats.lastValidatedAt(`lic_${id}_${LICENCES - 1}`)).toEqual(second);
  expect(await db.collection('validation_activity').countDocuments({ last_validated_at: second })).toBe(LICENCES);
});
