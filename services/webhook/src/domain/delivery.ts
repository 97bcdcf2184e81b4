import { createHmac } from 'node:crypto';

// Standard Webhooks (standardwebhooks.com): the body is {id, type, created_at, data};
// headers webhook-id, webhook-timestamp (seconds) and webhook-signature, a
// space-separated list of "v1,<base64 HMAC-SHA256 of id.timestamp.body>", one
// per live secret (two during a rotation's overlap).

/** The HMAC key of a "whsec_<base64>" secret is the decoded base64 part. */
export function signature(secret: string, id: string, timestampS: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampS}.${body}`).digest('base64')}`;
}

export function signedHeaders(secrets: string[], id: string, timestampS: number, body: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'licensing-webhooks/1',
    'webhook-id': id,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': secrets.map((s) => signature(s, id, timestampS, body)).join(' '),
  };
}

/** About 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: eight attempts over about 27 hours. */
export const DEFAULT_SCHEDULE_S = [5, 300, 1800, 7200, 18000, 36000, 36000];

export type Outcome = { kind: 'delivered' } | { kind: 'gone' } | { kind: 'retry'; at: Date } | { kind: 'failed' };

/** What to do after an attempt: 2xx delivered, 410 gone (disable), else retry by the schedule until it runs out. */
export function nextStep(statusCode: number | null, attemptsMade: number, now: Date, scheduleS: number[]): Outcome {
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) return { kind: 'delivered' };
  if (statusCode === 410) return { kind: 'gone' };
  const wait = scheduleS[attemptsMade - 1];
  return wait === undefined ? { kind: 'failed' } : { kind: 'retry', at: new Date(now.getTime() + wait * 1000) };
}

/** Five days of nothing but failures disable an endpoint. */
export const FAILING_DAYS_BEFORE_DISABLE = 5;

export function failingTooLong(failingSince: Date | null, now: Date): boolean {
  return !!failingSince && now.getTime() - failingSince.getTime() >= FAILING_DAYS_BEFORE_DISABLE * 86_400_000;
}

/** An endpoint subscribes to an event type by name or by "*". */
export const subscribes = (events: string[], type: string) => events.includes('*') || events.includes(type);
