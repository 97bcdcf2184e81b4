import { int, str, type ConfigOf } from '@licensing/runtime';

// The transfer module's settings, part of the licence service's (config.ts spreads them in).
export const transferSchema = {
  WEBHOOK_GRPC_ADDR: str('Webhook service address (host:port), for the webhook endpoints of an imported export', {
    default: '127.0.0.1:15055',
  }),
  LICENSE_BATCH_SWEEP_INTERVAL_MS: int(
    'How often licence batches whose run stopped (a crash, a stop) are looked for, to be resumed once their 30 s lease has run out',
    { default: 10_000, min: 50 },
  ),
  IMPORT_POLL_INTERVAL_MS: int(
    'How often the import job looks for imports to run: new ones (also started at once by their upload) and those whose run stopped (a crash)',
    { default: 2000, min: 50, max: 600_000 },
  ),
  EXPORT_LEASE_MS: int(
    "How long a running export stays running without a word from the gateway writing it (each piece renews it, and the gateway's heartbeat every quarter of it): past it, the gateway is taken to have stopped and the export is failed, saying to start a new one",
    { default: 60_000, min: 1000, max: 3_600_000 },
  ),
};

export type TransferConfig = ConfigOf<typeof transferSchema>;
