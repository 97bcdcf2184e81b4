import { MAX_UPDATES_PER_COMMAND, appliedBefore, bulkUpdate, createLogger } from '@licensing/runtime';
import { ValidationCounter } from '../../src/jobs/validation-counter';
import type { HourCount, LastValidation, RecentGroup, ValidationStatsStore } from '../../src/store/stats';

// The licence service's validation counter (jobs/validation-counter.ts): counts kept in memory and
// written in batches, over a store that records the batches it is given (the queries themselves
// run against FerretDB in the e2e tests of the dashboard and the licence page).

class RecordingStatsStore {
  readonly hourCounts: Map<string, HourCount>[] = [];
  readonly lastValidated: Map<string, LastValidation>[] = [];
  readonly recentGroups: Map<string, RecentGroup>[] = [];
  stored = new Map<string, Date>();
  failing = false;

  private async take<T>(into: T[], batch: T): Promise<void> {
    if (this.failing) throw new Error('store away');
    into.push(batch);
  }
  addHourCounts(counts: Map<string, HourCount>) {
    return this.take(this.hourCounts, counts);
  }
  setLastValidated(last: Map<string, LastValidation>) {
    return this.take(this.lastValidated, last);
  }
  addRecentGroups(groups: Map<string, RecentGroup>) {
    return this.take(this.recentGroups, groups);
  }
  async lastValidatedAt(licenseId: string) {
    return this.stored.get(licenseId) ?? null;
  }
}

const at = (iso: string) => new Date(`2026-03-01T${iso}Z`);
const group = (over: Partial<RecentGroup> = {}): RecentGroup => ({
  accountId: 'acct_A',
  licenseId: 'lic_1',
  hour: at('10:15:00'),
  code: 'valid',
  fingerprint: 'mac-1',
  count: 1,
  lastAt: at('10:15:00'),
  ...over,
});

function setup() {
  const store = new RecordingStatsStore();
  const counter = new ValidationCounter(
    store as unknown as ValidationStatsStore,
    createLogger('test', 'silent'),
    60_000,
  );
  return { store, counter };
}

describe('the licence service counting validations', () => {
  it("adds up an account's hour by answer code, keeps each licence's latest validation and sums each group", async () => {
    const { store, counter } = setup();
    counter.record('acct_A', 'valid', true, at('10:01:00'));
    counter.record('acct_A', 'expired', false, at('10:59:59'));
    counter.add('acct_A', at('10:30:00'), 5, 4, { valid: 4, revoked: 1 }); // a gateway's counts
    counter.record('acct_A', 'valid', true, at('11:00:00')); // the next hour
    counter.validated('acct_A', 'lic_1', at('10:20:00'));
    counter.validated('acct_A', 'lic_1', at('10:05:00')); // older: not the latest
    counter.addRecent(group({ lastAt: at('10:15:00') }));
    counter.addRecent(group({ hour: at('10:40:00'), count: 2, lastAt: at('10:40:00') })); // same hour, code, machine
    counter.addRecent(group({ fingerprint: 'mac-2' }));
    await counter.flush();

    expect([...store.hourCounts[0].values()]).toEqual([
      {
        accountId: 'acct_A',
        hour: at('10:00:00'),
        validations: 7,
        valid: 5,
        byCode: { valid: 5, expired: 1, revoked: 1 },
      },
      { accountId: 'acct_A', hour: at('11:00:00'), validations: 1, valid: 1, byCode: { valid: 1 } },
    ]);
    expect([...store.lastValidated[0]]).toEqual([['lic_1', { accountId: 'acct_A', at: at('10:20:00') }]]);
    expect([...store.recentGroups[0].values()]).toEqual([
      group({ hour: at('10:00:00'), count: 3, lastAt: at('10:40:00') }),
      group({ hour: at('10:00:00'), fingerprint: 'mac-2' }),
    ]);

    await counter.flush(); // nothing new: nothing written
    expect([store.hourCounts.length, store.lastValidated.length, store.recentGroups.length]).toEqual([1, 1, 1]);
  });

  it('keeps what a failed write held and adds it to what was counted meanwhile', async () => {
    const { store, counter } = setup();
    counter.record('acct_A', 'valid', true, at('10:01:00'));
    counter.validated('acct_A', 'lic_1', at('10:01:00'));
    counter.addRecent(group());
    store.failing = true;
    await counter.flush();
    store.failing = false;
    counter.record('acct_A', 'valid', true, at('10:02:00'));
    counter.validated('acct_A', 'lic_1', at('10:00:30')); // older than the one kept
    counter.addRecent(group({ lastAt: at('10:16:00') }));
    await counter.flush();

    expect([...store.hourCounts[0].values()]).toEqual([
      { accountId: 'acct_A', hour: at('10:00:00'), validations: 2, valid: 2, byCode: { valid: 2 } },
    ]);
    expect([...store.lastValidated[0]]).toEqual([['lic_1', { accountId: 'acct_A', at: at('10:01:00') }]]);
    expect([...store.recentGroups[0].values()]).toEqual([
      group({ hour: at('10:00:00'), count: 2, lastAt: at('10:16:00') }),
    ]);
  });

  it('answers when a licence was last validated from what it holds, else from the store', async () => {
    const { store, counter } = setup();
    store.stored.set('lic_1', at('09:00:00'));
    store.stored.set('lic_2', at('09:30:00'));
    counter.validated('acct_A', 'lic_1', at('10:00:00'));
    expect(await counter.lastValidatedAt('lic_1')).toEqual(at('10:00:00'));
    expect(await counter.lastValidatedAt('lic_2')).toEqual(at('09:30:00'));
    expect(await counter.lastValidatedAt('lic_3')).toBeNull();
  });

  it("keeps when each machine was last seen, and stores it in the flush's one batch (again after a failure)", async () => {
    const store = new RecordingStatsStore();
    const batches: Map<string, Map<string, Date>>[] = [];
    let failing = true;
    const counter = new ValidationCounter(
      store as unknown as ValidationStatsStore,
      createLogger('test', 'silent'),
      60_000,
      async (seen) => {
        if (failing) throw new Error('store away');
        batches.push(seen);
      },
    );
    counter.addRecent(group({ lastAt: at('10:15:00') }));
    counter.addRecent(group({ code: 'expired', lastAt: at('10:20:00') })); // same machine, later
    counter.addRecent(group({ lastAt: at('10:01:00') })); // older: not the latest
    counter.addRecent(group({ fingerprint: 'mac-2', lastAt: at('10:05:00') }));
    counter.addRecent(group({ fingerprint: '' })); // a validation naming no machine
    await counter.flush();
    expect(batches).toEqual([]);
    failing = false;
    await counter.flush();
    expect(batches).toHaveLength(1);
    expect(batches[0]).toEqual(
      new Map([
        [
          'lic_1',
          new Map([
            ['mac-1', at('10:20:00')],
            ['mac-2', at('10:05:00')],
          ]),
        ],
      ]),
    );
    await counter.flush();
    expect(batches).toHaveLength(1); // nothing new: no write
  });
});

describe('a flush stored part of the way', () => {
  // The store writes a statement per entry, in order, a few per command (runtime's bulkUpdate); a
  // command that fails says how many statements the ones before it stored (appliedBefore).
  it('bulkUpdate: commands of MAX_UPDATES_PER_COMMAND; a failure keeps its own error and says what was applied', async () => {
    const commands: unknown[][] = [];
    const model = {
      bulkWrite: async (ops: unknown[]) => {
        if (commands.length === 2) throw new Error('store away');
        commands.push(ops);
      },
    };
    const ops = Array.from({ length: 3 * MAX_UPDATES_PER_COMMAND }, (_, i) => ({ updateOne: { filter: { _id: i } } }));
    const err = await bulkUpdate(model as never, ops as never).catch((e: unknown) => e);
    expect(commands.map((c) => c.length)).toEqual([MAX_UPDATES_PER_COMMAND, MAX_UPDATES_PER_COMMAND]);
    expect((err as Error).message).toBe('store away'); // the store's own error, as store-errors.ts reads it
    expect(appliedBefore(err)).toBe(2 * MAX_UPDATES_PER_COMMAND);
    expect(appliedBefore(new Error('any other'))).toBe(0);
  });

  it('the counter keeps only what was not stored: counts are added once, however the flush failed', async () => {
    // Over a store whose first command of each flush is stored and whose second fails.
    const stored: HourCount[] = [];
    const store = {
      async addHourCounts(counts: Map<string, HourCount>) {
        let commands = 0;
        const model = {
          bulkWrite: async (ops: { c: HourCount }[]) => {
            if (commands++ === 1) throw new Error('store away');
            stored.push(...ops.map((o) => o.c));
          },
        };
        await bulkUpdate(model as never, [...counts.values()].map((c) => ({ c })) as never);
      },
      async setLastValidated() {},
      async addRecentGroups() {},
    };
    const counter = new ValidationCounter(
      store as unknown as ValidationStatsStore,
      createLogger('test', 'silent'),
      60_000,
    );
    const accounts = Array.from({ length: MAX_UPDATES_PER_COMMAND + 3 }, (_, i) => `acct_${i}`);
    for (const a of accounts) counter.record(a, 'valid', true, at('10:15:00'));
    await counter.flush(); // the first command's accounts stored, the rest kept
    expect(stored.map((c) => c.accountId)).toEqual(accounts.slice(0, MAX_UPDATES_PER_COMMAND));
    stored.length = 0;
    await counter.flush(); // only the rest: none of the first is counted twice
    expect(stored.map((c) => [c.accountId, c.validations])).toEqual(
      accounts.slice(MAX_UPDATES_PER_COMMAND).map((a) => [a, 1]),
    );
  });

  it('holds at most its cap of entries per map between flushes, counts each one it drops, and takes new ones after a flush', async () => {
    const store = new RecordingStatsStore();
    const seen: Map<string, Map<string, Date>>[] = [];
    const dropped: string[] = [];
    const counter = new ValidationCounter(
      store as unknown as ValidationStatsStore,
      createLogger('test', 'silent'),
      60_000,
      async (s) => {
        seen.push(s);
      },
      (kind) => dropped.push(kind),
      3,
    );
    // Five licences, each validated from a machine never seen before (random fingerprints, say).
    for (let i = 0; i < 5; i++) {
      counter.record(`acct_${i}`, 'valid', true, at('10:15:00'));
      counter.validated(`acct_${i}`, `lic_${i}`, at('10:15:00'));
      counter.addRecent(group({ licenseId: `lic_${i}`, fingerprint: `random-${i}` }));
    }
    // Entries already held still count: the first licence again, from its machine.
    counter.record('acct_0', 'valid', true, at('10:20:00'));
    counter.addRecent(group({ licenseId: 'lic_0', fingerprint: 'random-0', lastAt: at('10:20:00') }));
    await counter.flush();
    expect([...store.hourCounts[0].values()].map((c) => [c.accountId, c.validations])).toEqual([
      ['acct_0', 2],
      ['acct_1', 1],
      ['acct_2', 1],
    ]);
    expect([...store.lastValidated[0].keys()]).toEqual(['lic_0', 'lic_1', 'lic_2']);
    expect([...store.recentGroups[0].values()].map((g) => [g.licenseId, g.count])).toEqual([
      ['lic_0', 2],
      ['lic_1', 1],
      ['lic_2', 1],
    ]);
    expect([...seen[0]].map(([l, m]) => [l, [...m.keys()]])).toEqual([
      ['lic_0', ['random-0']],
      ['lic_1', ['random-1']],
      ['lic_2', ['random-2']],
    ]);
    expect(dropped.sort()).toEqual([
      'hour',
      'hour',
      'last_validated',
      'last_validated',
      'recent',
      'recent',
      'seen',
      'seen',
    ]);
    // A flush empties the maps: the next validations are held again.
    counter.record('acct_4', 'valid', true, at('10:25:00'));
    counter.addRecent(group({ licenseId: 'lic_4', fingerprint: 'random-4' }));
    await counter.flush();
    expect([...store.hourCounts[1].keys()]).toHaveLength(1);
    expect([...seen[1].keys()]).toEqual(['lic_4']);
    expect(dropped).toHaveLength(8);
  });
});
