/** The value of the first line of a Prometheus /metrics page that matches `pattern` (0 when none does). */
export async function metric(url: string, pattern: RegExp): Promise<number> {
  const line = (await (await fetch(url)).text()).split('\n').find((l) => pattern.test(l));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** The gateway's validations answered from its memory so far. */
export const cacheHits = (metricsUrl: string) =>
  metric(metricsUrl, /^licensing_validation_cache_total\{.*result="hit"/);
