import { CONTENDED_ATTEMPTS, chooseSlot, untilUncontended } from '@licensing/runtime';

describe('choosing an activation slot', () => {
  it('never answers a taken slot or one beyond the limit, and null when all are taken', () => {
    for (let max = 1; max <= 12; max++) {
      const taken = new Set<string>();
      for (let i = 0; i < max; i++) {
        const slot = chooseSlot(taken, max)!;
        expect(slot).not.toBeNull();
        expect(taken.has(slot)).toBe(false);
        expect(Number(slot)).toBeGreaterThanOrEqual(1);
        expect(Number(slot)).toBeLessThanOrEqual(max);
        taken.add(slot);
      }
      expect(chooseSlot(taken, max)).toBeNull();
    }
  });

  it('finds the one free slot of a licence with 10,000, and ignores freed keys', () => {
    const taken = new Set(Array.from({ length: 10_000 }, (_, i) => String(i + 1)).filter((k) => k !== '4711'));
    taken.add('freed:act_x');
    expect(chooseSlot(taken, 10_000)).toBe('4711');
  });

  it('spreads concurrent choosers over the free slots', () => {
    const picks = new Set(Array.from({ length: 10 }, () => chooseSlot(new Set(), 1000)));
    expect(picks.size).toBeGreaterThan(5);
  });
});

describe('untilUncontended', () => {
  it('tries a contended creation again, and answers what the first uncontended attempt stored', async () => {
    const answers: ('contended' | string)[] = ['contended', 'contended', 'stored'];
    let calls = 0;
    await expect(untilUncontended(async () => answers[calls++])).resolves.toBe('stored');
    expect(calls).toBe(3);
  });

  it(`gives up after ${CONTENDED_ATTEMPTS} contended attempts and says so`, async () => {
    let calls = 0;
    await expect(
      untilUncontended(async () => {
        calls++;
        return 'contended' as const;
      }),
    ).resolves.toBe('contended');
    expect(calls).toBe(CONTENDED_ATTEMPTS);
  });

  it('does not try again what was stored or refused as full', async () => {
    let calls = 0;
    await expect(
      untilUncontended(async () => {
        calls++;
        return null;
      }),
    ).resolves.toBeNull();
    expect(calls).toBe(1);
  });
});
