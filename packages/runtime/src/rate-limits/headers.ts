import { bindingBudget, isHourly, type BudgetState } from './budgets';

// IETF draft-ietf-httpapi-ratelimit-headers-10 fields plus the X-RateLimit-* trio, on every
// counted request (the Express middleware, the dashboard's meter and the validation fast path).

/** RateLimit-Policy: every budget a request spends, the hourly one (the account's quota or its app allowance) first, then the minutes; the same for every request of one caller and kind. */
export function rateLimitPolicy(budgets: Pick<BudgetState, 'name' | 'limit' | 'windowS'>[]): string {
  const policy = (x: Pick<BudgetState, 'name' | 'limit' | 'windowS'>) => `"${x.name}";q=${x.limit};w=${x.windowS}`;
  const hourly = budgets.filter((x) => isHourly(x.name));
  const minutes = budgets.filter((x) => !isHourly(x.name));
  return [...hourly, ...minutes].map(policy).join(', ');
}

/**
 * The fields for the budget closest to running out (on every request: no sorting), appended to a
 * flat [name, value, …] list as writeHead takes it.
 */
export function pushRateLimitHeaders(
  out: string[],
  budgets: BudgetState[],
  nowS: number,
  policy = rateLimitPolicy(budgets),
): string[] {
  const b = bindingBudget(budgets);
  out.push(
    'RateLimit-Policy',
    policy,
    'RateLimit',
    `"${b.name}";r=${b.remaining};t=${b.resetS}`,
    'X-RateLimit-Limit',
    String(b.limit),
    'X-RateLimit-Remaining',
    String(b.remaining),
    // Epoch seconds, as GitHub and most clients expect.
    'X-RateLimit-Reset',
    String(nowS + b.resetS),
  );
  return out;
}

/** The same fields as an object (Express's res.set). */
export function rateLimitHeaders(budgets: BudgetState[], nowS: number, policy?: string): Record<string, string> {
  const list = pushRateLimitHeaders([], budgets, nowS, policy);
  const headers: Record<string, string> = {};
  for (let i = 0; i < list.length; i += 2) headers[list[i]] = list[i + 1];
  return headers;
}
