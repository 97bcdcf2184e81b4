// A scripted fetch for the SDK's unit tests (pure logic, no network): each
// call takes the next planned outcome, and every request is recorded.

export interface Recorded {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** An answer, a thrown error (a network failure), or 'hang' (answers only by aborting). */
export type Outcome = { status: number; body?: unknown; headers?: Record<string, string> } | Error | 'hang';

export function json(status: number, body?: unknown, headers: Record<string, string> = {}): Outcome {
  return {
    status,
    body,
    headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', ...headers },
  };
}

export function problem(
  status: number,
  code: string,
  detail: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Outcome {
  return json(
    status,
    { type: `/docs#error-${code}`, title: 'x', status, detail, code, request_id: 'req_test', ...extra },
    headers,
  );
}

export function fakeFetch(...plan: Outcome[]) {
  const calls: Recorded[] = [];
  const fetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    calls.push({
      url: String(input),
      method: init.method ?? 'GET',
      headers: { ...(init.headers as Record<string, string>) },
      body: init.body as string | undefined,
    });
    const next = plan.length > 1 ? plan.shift()! : plan[0];
    if (!next) throw new Error('fakeFetch: no outcome planned');
    if (next === 'hang') {
      return new Promise<Response>((_resolve, reject) =>
        init.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))),
      );
    }
    if (next instanceof Error) throw next;
    const text = next.body === undefined ? null : typeof next.body === 'string' ? next.body : JSON.stringify(next.body);
    return new Response(next.status === 204 ? null : text, { status: next.status, headers: next.headers });
  };
  return { fetch: fetch as typeof globalThis.fetch, calls };
}
