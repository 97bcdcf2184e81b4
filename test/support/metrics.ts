import { eventually } from './eventually';

/** The value of the first line of a Prometheus /metrics page that matches `pattern` (0 when none does). */
export async function metric(url: string, pattern: RegExp): Promise<number> {
  const line = (await (await fetch(url)).text()).split('\n').find((l) => pattern.test(l));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** The gateway's validations answered from its memory so far. */
export const cacheHits = (metricsUrl: string) =>
  metric(metricsUrl, /^licensing_validation_cache_total\{.*result="hit"/);

/**
 * The gateway's cache follows its events: a validation of the licence is answered from memory (the hit
 * counter moves by one), and once the licence is suspended the next answers say so within a second.
 */
export async function expectCacheFollows(opts: {
  metricsUrl: string;
  code: () => Promise<string>;
  suspend: () => Promise<number>;
  timeoutMs: number;
}): Promise<void> {
  await eventually(
    async () => {
      const before = await cacheHits(opts.metricsUrl);
      if ((await opts.code()) !== 'valid') throw new Error('the licence did not validate');
      const after = await cacheHits(opts.metricsUrl);
      if (after !== before + 1) throw new Error(`not answered from memory (hits ${before} → ${after})`);
    },
    { timeoutMs: opts.timeoutMs, intervalMs: 100 },
  );
  if ((await opts.suspend()) !== 200) throw new Error('the suspension was refused');
  await eventually(
    async () => {
      const code = await opts.code();
      if (code !== 'suspended') throw new Error(`still ${code}`);
    },
    { timeoutMs: 1000 },
  );
}
