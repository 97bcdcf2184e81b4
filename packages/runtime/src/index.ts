// What every service and the gateway share, exported from one entry point. Folders form layers: a
// folder imports only folders below it (never one beside or above it, nor a file of the directory
// that holds it); service.ts, the start and stop of a service, sits on top with this file
// (test/repository/layers.test.ts reads the order from the next line; docs/architecture.md states it).
// Layers, lowest first: core, html < observability < security, mail, tasks, rate-limits < store < events, grpc < caching

export * from './core/config';
export * from './html/template';
export * from './observability/logger';
export * from './core/errors';
export * from './core/ids';
export * from './security/digest';
export * from './core/clock';
export * from './core/time-budget';
export * from './events/bus';
export * from './events/durable-batches';
export * from './events/event-stream';
export * from './events/events-setup';
export * from './events/followed-events';
export * from './caching/exact-cache';
export * from './events/nats-access';
export * from './events/nats-servers';
export * from './events/outbox';
export * from './grpc/internal-auth';
export * from './grpc/internal-tls';
export * from './grpc/health';
export * from './grpc/server';
export * from './grpc/client';
export * from './grpc/service-clients';
export * from './store/mongo';
export * from './store/migrations';
export { quietIdlePools } from './store/idle-pools';
export * from './service';
export * from './service-jobs';
export * from './store/pagination';
export * from './store/expired';
export * from './store/ttl-sweep';
export * from './store/idempotency';
export * from './mail/email';
export * from './mail/transport';
export * from './security/sealed';
export * from './security/reseal';
export * from './tasks/periodic';
export * from './core/request-scope';
export * from './core/request-origin';
export * from './observability/metrics';
export * from './observability/hot-metrics';
export * from './observability/http-metrics';
export * from './observability/access-log';
export * from './tasks/retry';
export * from './store/query-shapes';
export * from './store/query-deadline';
export * from './store/slots';
export * from './store/bulk-updates';
export * from './store/postgres';
export * from './security/text';
export * from './security/metadata-keys';
export * from './security/client-address';
export * from './security/session-token';
export * from './security/https-rule';
export * from './store/store-errors';
export * from './store/store-watchdog';
export * from './observability/tracing';
export * from './rate-limits/principal';
export * from './rate-limits/attempt-throttle';
export * from './rate-limits/budgets';
export * from './rate-limits/headers';
export * from './rate-limits/limiter';
export * from './rate-limits/quota';
