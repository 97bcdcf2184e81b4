import { newEvent } from '@licensing/runtime';
import { releaseJson, type DomainEvent } from '@licensing/proto';
import { releaseMessage, type ReleaseDoc } from '../store/releases';

/** What a webhook endpoint receives: the release as the REST API shows it (proto/rules/release-json.ts). */
const releaseData = (doc: Omit<ReleaseDoc, 'outbox'>) => releaseJson(releaseMessage(doc));

export const releasePublished = (doc: Omit<ReleaseDoc, 'outbox'>, now: Date): DomainEvent =>
  newEvent('release.published', doc.account_id, { release: releaseData(doc) }, now);

export const releaseYanked = (doc: Omit<ReleaseDoc, 'outbox'>, now: Date): DomainEvent =>
  newEvent('release.yanked', doc.account_id, { release: releaseData(doc) }, now);
