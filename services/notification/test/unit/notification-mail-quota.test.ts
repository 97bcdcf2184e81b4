import { PLAN_MAIL_QUOTA, mailQuotaOf, plans } from '@licensing/proto';
import { judge, quotaWindows } from '../../src/domain/mail-quota';
import type { MailCountStore } from '../../src/store/mail-quota';
import { MailAdmission } from '../../src/use-cases/mail-admission';

// The rules of an account's mail quota: its figures by plan, the windows a mail counts in, the verdict
// (queued with its turn in the account's round, or deferred to the end of the refusing window), and
// that a deferred mail leaves nothing counted.

/** Window counters in memory (the real ones are documents counted with $inc: store/mail-quota.ts). */
class Counts {
  readonly n = new Map<string, number>();
  async add(id: string, by: number): Promise<number> {
    const v = (this.n.get(id) ?? 0) + by;
    this.n.set(id, v);
    return v;
  }
  async deleteEnded(): Promise<number> {
    return 0;
  }
  asStore = () => this as unknown as MailCountStore;
}

const at = (iso: string) => new Date(iso);

describe('figures', () => {
  it('every plan has an hourly and a daily quota, the free plan lowest, and a day holds more than an hour', () => {
    for (const plan of plans) {
      const q = PLAN_MAIL_QUOTA[plan];
      expect(q.perDay).toBeGreaterThan(q.perHour);
      expect(q.perHour).toBeGreaterThanOrEqual(PLAN_MAIL_QUOTA.free.perHour);
      expect(q.perDay).toBeGreaterThanOrEqual(PLAN_MAIL_QUOTA.free.perDay);
    }
    expect(PLAN_MAIL_QUOTA.pro.perHour).toBeGreaterThan(PLAN_MAIL_QUOTA.free.perHour);
    expect(mailQuotaOf('unheard-of')).toEqual(PLAN_MAIL_QUOTA.free);
  });
});

describe('windows and verdicts', () => {
  it('a mail counts in its UTC clock hour and its UTC day, each ending at its boundary', () => {
    const [hour, day] = quotaWindows('acct_1', { perHour: 5, perDay: 9 }, at('2027-01-01T10:59:59.999Z'));
    expect(hour).toMatchObject({ limit: 5, endsAt: at('2027-01-01T11:00:00.000Z') });
    expect(day).toMatchObject({ limit: 9, endsAt: at('2027-01-02T00:00:00.000Z') });
    const [next] = quotaWindows('acct_1', { perHour: 5, perDay: 9 }, at('2027-01-01T11:00:00.000Z'));
    expect(next.id).not.toBe(hour.id);
    // Another account's windows are its own.
    expect(quotaWindows('acct_2', { perHour: 5, perDay: 9 }, at('2027-01-01T10:00:00.000Z'))[0].id).not.toBe(hour.id);
  });

  it('within both limits: queued, its turn the count of its hour; past one: deferred to that window’s end', () => {
    const windows = quotaWindows('acct_1', { perHour: 2, perDay: 3 }, at('2027-01-01T10:30:00Z'));
    expect(judge(windows, [2, 3])).toEqual({ status: 'queued', turn: 2 });
    expect(judge(windows, [3, 3])).toMatchObject({ status: 'deferred', until: at('2027-01-01T11:00:00Z') });
    expect(judge(windows, [1, 4])).toMatchObject({ status: 'deferred', until: at('2027-01-02T00:00:00Z') });
  });
});

describe('admission', () => {
  const setUp = (plan = 'free') => {
    const counts = new Counts();
    const lookups: string[] = [];
    const admission = new MailAdmission(counts.asStore(), async (id) => {
      lookups.push(id);
      return plan;
    });
    return { counts, admission, lookups };
  };

  it("admits the plan's hourly quota in turn order, defers the rest to the next hour, and admits again then", async () => {
    const { admission } = setUp();
    const now = at('2027-01-01T10:00:00Z');
    const turns = [];
    for (let i = 0; i < PLAN_MAIL_QUOTA.free.perHour; i++) turns.push(await admission.admit('acct_1', now));
    expect(turns.map((t) => (t.status === 'queued' ? t.turn : 0))).toEqual(
      Array.from({ length: PLAN_MAIL_QUOTA.free.perHour }, (_, i) => i + 1),
    );
    expect(await admission.admit('acct_1', now)).toEqual({ status: 'deferred', until: at('2027-01-01T11:00:00Z') });
    // Another account is not held by this one's quota, and starts its own round at turn 1.
    expect(await admission.admit('acct_2', now)).toEqual({ status: 'queued', turn: 1 });
    expect(await admission.admit('acct_1', at('2027-01-01T11:00:00Z'))).toEqual({ status: 'queued', turn: 1 });
  });

  it('defers to the next day once the daily quota is spent, whatever the hour', async () => {
    const { admission } = setUp();
    const { perHour, perDay } = PLAN_MAIL_QUOTA.free;
    let hour = 0;
    let admitted = 0;
    while (admitted < perDay) {
      const now = new Date(Date.UTC(2027, 0, 1, hour));
      for (let i = 0; i < perHour && admitted < perDay; i++, admitted++)
        expect((await admission.admit('acct_1', now)).status).toBe('queued');
      hour++;
    }
    expect(await admission.admit('acct_1', new Date(Date.UTC(2027, 0, 1, hour)))).toEqual({
      status: 'deferred',
      until: at('2027-01-02T00:00:00Z'),
    });
  });

  it('a deferred mail, or one forgotten (its request was already stored), leaves nothing counted', async () => {
    const { admission, counts } = setUp();
    const now = at('2027-01-01T10:00:00Z');
    for (let i = 0; i < PLAN_MAIL_QUOTA.free.perHour; i++) await admission.admit('acct_1', now);
    await admission.admit('acct_1', now);
    await admission.admit('acct_1', now);
    const [hour, day] = quotaWindows('acct_1', PLAN_MAIL_QUOTA.free, now);
    expect(counts.n.get(hour.id)).toBe(PLAN_MAIL_QUOTA.free.perHour);
    expect(counts.n.get(day.id)).toBe(PLAN_MAIL_QUOTA.free.perHour);
    await admission.forget('acct_1', now);
    expect(counts.n.get(hour.id)).toBe(PLAN_MAIL_QUOTA.free.perHour - 1);
    expect((await admission.admit('acct_1', now)).status).toBe('queued');
  });

  it("looks an account's plan up once a minute, not once a mail", async () => {
    const { admission, lookups } = setUp('pro');
    const now = at('2027-01-01T10:00:00Z');
    for (let i = 0; i < 10; i++) await admission.admit('acct_1', now);
    expect(lookups).toEqual(['acct_1']);
    await admission.admit('acct_1', new Date(now.getTime() + 60_001));
    expect(lookups).toEqual(['acct_1', 'acct_1']);
  });
});
