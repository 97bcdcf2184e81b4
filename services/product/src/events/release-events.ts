import { newEvent } from '@licensing/runtime';
import type { DomainEvent, ReleaseData } from '@licensing/proto';
import type { ReleaseDoc } from '../store/releases';

/** A release as the REST API shows it (absent text and times null): what a webhook endpoint receives. */
export const releaseData = (doc: Omit<ReleaseDoc, 'outbox'>): ReleaseData => ({
  id: doc._id,
  product_id: doc.product_id,
  version: doc.version,
  channel: doc.channel,
  status: doc.status,
  notes: doc.notes || null,
  published_at: doc.published_at?.toISOString() ?? null,
  yanked_at: doc.yanked_at?.toISOString() ?? null,
  entitlements: doc.entitlements,
  // Each file's public facts only: where a file is kept is no concern of an endpoint.
  artifacts: doc.artifacts.map((a) => ({
    filename: a.filename,
    platform: a.platform,
    arch: a.arch,
    size: a.size,
    sha256: a.sha256,
    signature: a.signature || null,
    downloads: a.downloads,
    created_at: a.created_at.toISOString(),
  })),
  created_at: doc.created_at.toISOString(),
});

export const releasePublished = (doc: Omit<ReleaseDoc, 'outbox'>, now: Date): DomainEvent =>
  newEvent('release.published', doc.account_id, { release: releaseData(doc) }, now);

export const releaseYanked = (doc: Omit<ReleaseDoc, 'outbox'>, now: Date): DomainEvent =>
  newEvent('release.yanked', doc.account_id, { release: releaseData(doc) }, now);
