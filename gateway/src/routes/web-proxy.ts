import { Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import type { Logger } from '@licensing/runtime';

/** The paths the web component serves: every page a person sees. */
export const WEB_PATHS = ['/dashboard', '/portal', '/checkout'] as const;

/** Whether a path is one of the web component's ("/dashboard", "/dashboard/…", never "/dashboardx"). */
export const isWebPath = (path: string): boolean =>
  WEB_PATHS.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));

/** How long an idle connection to the web component is kept: less than its keepAliveTimeout (web/src/main.ts). */
export const WEB_PROXY_IDLE_SOCKET_MS = 30_000;

const UNAVAILABLE_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Unavailable</title></head><body><main><h1>Unavailable for a moment</h1><p>This page cannot be shown right now. Nothing was changed. Please reload in a few seconds.</p></main></body></html>';

/**
 * The dashboard, the customer portal and the hosted checkout page are served by the web component
 * (web/); the gateway passes
 * those paths on as they came (method, path, query, body, cookies), with the request id and the
 * client's address and scheme as the gateway judged them (X-Forwarded-For/-Proto, which the web
 * component believes from the gateway), and sends
 * the answer back as it is. The gateway itself renders no page.
 */
export function webPagesProxy(target: string, log: Logger): RequestHandler {
  return createProxyMiddleware<Request, Response>({
    target,
    pathFilter: (path) => isWebPath(path),
    // Connections to the web component are kept and reused: without an agent the proxy asks for
    // "Connection: close" on each request, and that answer would close the browser's connection too.
    // A free connection is closed by this side first (the agent destroys an idle socket on its timeout).
    agent: new Agent({ keepAlive: true, timeout: WEB_PROXY_IDLE_SOCKET_MS }),
    on: {
      proxyReq: (proxyReq, req, res) => {
        proxyReq.setHeader('x-request-id', String((res as Response).locals?.requestId ?? ''));
        // The client as the gateway judged it (TRUSTED_PROXIES): the web component trusts the gateway
        // alone, so one address, never a chain a client could have started.
        proxyReq.setHeader('x-forwarded-for', req.ip ?? '');
        proxyReq.setHeader('x-forwarded-proto', req.protocol);
        proxyReq.setHeader('x-forwarded-host', req.get('host') ?? '');
      },
      error: (err, _req, res) => {
        log.warn({ err: (err as Error).message }, 'web component unavailable');
        const out = res as ServerResponse<IncomingMessage>;
        if (!out.headersSent && typeof out.writeHead === 'function') {
          out.writeHead(503, {
            'content-type': 'text/html; charset=utf-8',
            'retry-after': '5',
            'cache-control': 'no-store',
          });
          out.end(UNAVAILABLE_PAGE);
        }
      },
    },
  });
}
