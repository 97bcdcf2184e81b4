import type { Request } from 'express';

/** PUBLIC_BASE_URL without a trailing slash, else the scheme and host this request came to (trusted proxies only). */
export function publicBaseOf(req: Request, configured: string): string {
  if (configured) return configured.replace(/\/+$/, '');
  return `${req.protocol}://${req.get('host')}`;
}
