import { LicensingClient, type LicensingClientOptions } from '@licensing/client';
import { checkAcceptedRequest, checkResponse } from './openapi';

/**
 * The real fetch, with every exchange checked against the OpenAPI document
 * like client() in stack.ts does, so SDK calls also catch drift.
 */
export const checkedFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  const url = new URL(String(input));
  const text = await res.clone().text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON: checkResponse reports it where JSON was due */
  }
  const method = init?.method ?? 'GET';
  checkResponse(method, `${url.pathname}${url.search}`, res.status, res.headers.get('content-type') ?? '', body);
  checkAcceptedRequest(
    method,
    `${url.pathname}${url.search}`,
    res.status,
    typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
  );
  return res;
};

/** An SDK client for the stack at baseUrl, its answers checked against the document. */
export function sdk(baseUrl: string, apiKey: string, options: Partial<LicensingClientOptions> = {}): LicensingClient {
  return new LicensingClient({ baseUrl, apiKey, fetch: checkedFetch, ...options });
}
