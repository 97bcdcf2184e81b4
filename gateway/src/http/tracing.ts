import type { IncomingHttpHeaders } from 'node:http';
import { endSpan, remoteContext, SpanKind, type StartedSpan, type Tracing } from '@licensing/runtime';

// The span of one HTTP request (with OpenTelemetry on; off, none of this runs): the trace the
// caller's `traceparent` names, or a new one that starts here. Its context is the request's scope
// (request-scope.ts), so the gRPC calls and events the request causes join the same trace.

/** The server span of a request, before its route is known. */
export function startRequestSpan(tracing: Tracing, method: string, headers: IncomingHttpHeaders): StartedSpan {
  return tracing.start(method, SpanKind.SERVER, remoteContext(headers.traceparent, headers.tracestate), {
    'http.request.method': method,
  });
}

/** Ends it, named after its route template (never the URL: a licence key may be in its query). */
export function endRequestSpan(started: StartedSpan, method: string, route: string | undefined, status: number): void {
  if (route) started.span.updateName(`${method} ${route}`);
  endSpan(started.span, status >= 500 ? `HTTP ${status}` : false, {
    'http.response.status_code': status,
    ...(route ? { 'http.route': route } : {}),
  });
}

/** The trace id an access-log line carries. */
export const traceIdOf = (started: StartedSpan | undefined) => started?.span.spanContext().traceId;
