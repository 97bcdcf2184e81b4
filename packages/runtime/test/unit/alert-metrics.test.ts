import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metrics } from '@licensing/runtime';
import { selfSignedCert } from '../../../../test/support/tls';

// The gauges the shipped alerts read that are not plain counts (deploy/monitoring): a certificate's
// expiry, and states a clustered gateway's primary must combine by min or max, not by sum.

it('certificateExpiry exports when the certificate served expires, by certificate, again after a renewal', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cert-expiry-'));
  try {
    const { cert } = selfSignedCert(dir, 'gateway'); // one day valid
    const metrics = new Metrics('gateway');
    metrics.certificateExpiry('https', cert);
    metrics.certificateExpiry('https', cert); // a reload of the same pair replaces the series
    const { values } = await metrics.registry
      .getSingleMetric('licensing_tls_certificate_expiry_timestamp_seconds')!
      .get();
    expect(values).toHaveLength(1);
    expect(values[0].labels).toEqual({ certificate: 'https' });
    const inADay = Date.now() / 1000 + 86_400;
    expect(Math.abs(values[0].value - inADay)).toBeLessThan(3600);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('a state gauge carries the aggregator a clustered gateway combines its workers with', async () => {
  const metrics = new Metrics('gateway');
  metrics.gauge('licensing_nats_connected', async () => 1, 'min');
  metrics.gauge('licensing_outbox_backlog', async () => 3);
  expect(metrics.registry.getSingleMetric('licensing_nats_connected')).toMatchObject({ aggregator: 'min' });
  expect(metrics.registry.getSingleMetric('licensing_outbox_backlog')).toMatchObject({ aggregator: 'sum' });
  expect((await metrics.render()).body).toContain('licensing_nats_connected{component="gateway"} 1');
});
