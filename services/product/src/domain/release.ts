import { AppError } from '@licensing/runtime';
import {
  RELEASE_ENTITLEMENTS_MAX,
  RELEASE_NOTES_MAX_LENGTH,
  RELEASE_VERSION_MAX_LENGTH,
  entitlementsProblem,
  isOneOf,
  releaseChannels,
  releaseStatuses,
  type CreateReleaseRequest,
  type ReleaseChannel,
  type ReleaseStatus,
} from '@licensing/proto';
import { defaultChannel, parseVersion, versionKey } from './release-version';

// A release's rules: what a new one may hold (proto/rules' limits and vocabularies) and what each
// action does in each state. Pure: the use cases read and write, these decide.

/** A new release's fields, checked and in their stored form. */
export interface ReleaseInput {
  /** As given, trimmed. */
  version: string;
  /** The version without build metadata: unique per product (release-version.ts, versionKey). */
  version_key: string;
  channel: ReleaseChannel;
  notes: string;
  entitlements: string[];
  /** Given at creation: the time publishing records; null: the time it is published. */
  published_at: Date | null;
}

type ReleaseFields = Pick<CreateReleaseRequest, 'version' | 'channel' | 'notes' | 'entitlements' | 'published_at'>;

/** A create request's fields, each checked; the first problem is refused naming its field. */
export function checkReleaseInput(req: ReleaseFields): ReleaseInput {
  const version = req.version.trim();
  if (!version) throw AppError.invalid('version', 'version is required');
  if (version.length > RELEASE_VERSION_MAX_LENGTH)
    throw AppError.invalid('version', `version must be at most ${RELEASE_VERSION_MAX_LENGTH} characters`);
  const parsed = parseVersion(version);
  if (!parsed)
    throw AppError.invalid(
      'version',
      'version must be a Semantic Versioning 2.0.0 version, such as 1.4.2, 2.0.0-beta.1 or 1.0.0+build.7 (no "v" before it)',
    );
  const channel = req.channel === undefined ? defaultChannel(parsed) : req.channel;
  if (!isOneOf(releaseChannels, channel))
    throw AppError.invalid('channel', `channel must be one of ${releaseChannels.join(', ')}`);
  if (req.notes.length > RELEASE_NOTES_MAX_LENGTH)
    throw AppError.invalid('notes', `notes must be at most ${RELEASE_NOTES_MAX_LENGTH} characters`);
  const problem = entitlementsProblem('entitlements', req.entitlements, RELEASE_ENTITLEMENTS_MAX);
  if (problem) throw AppError.invalid(problem.field, problem.message);
  return {
    version,
    version_key: versionKey(parsed),
    channel,
    notes: req.notes,
    entitlements: [...req.entitlements],
    published_at: req.published_at === undefined ? null : checkTime('published_at', req.published_at),
  };
}

// A date, or a date and time (seconds and their fraction optional) with Z, an offset, or neither (UTC).
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?)?$/;

/**
 * An ISO 8601 date or time: 2026-05-01, 2026-05-01T09:30:00Z, 2026-05-01T11:30:00.250+02:00. A time
 * without a zone is read as UTC (a server's own zone would make the same text mean different times).
 * Every part in its range: no 30 February, no hour 24.
 */
export function checkTime(field: string, text: string): Date {
  const refused = () =>
    AppError.invalid(field, `${field} must be an ISO 8601 date or time, such as 2026-05-01T09:30:00Z`);
  const m = ISO_8601.exec(text.trim());
  if (!m) throw refused();
  const [y, mo, d, h = 0, mi = 0, s = 0] = m.slice(1, 7).map((part) => (part === undefined ? undefined : Number(part)));
  const at = new Date(Date.UTC(y!, mo! - 1, d!, h, mi, s));
  const same =
    at.getUTCFullYear() === y &&
    at.getUTCMonth() === mo! - 1 &&
    at.getUTCDate() === d &&
    at.getUTCHours() === h &&
    at.getUTCMinutes() === mi &&
    at.getUTCSeconds() === s;
  const zone = m[8]?.toUpperCase() ?? 'Z';
  const [oh, om] = zone === 'Z' ? [0, 0] : zone.slice(1).split(':').map(Number);
  if (!same || oh > 23 || om > 59) throw refused();
  const offsetMs = (zone.startsWith('-') ? -1 : 1) * (oh * 60 + om) * 60_000;
  const fractionMs = m[7] ? Math.floor(Number(m[7]) * 1000) : 0;
  return new Date(at.getTime() + fractionMs - offsetMs);
}

/** A list filter of a vocabulary: '' is any; another word is refused naming the filter. */
export function checkFilter<W extends string>(field: string, words: readonly W[], value: string): W | '' {
  if (value === '' || isOneOf(words, value)) return value as W | '';
  throw AppError.invalid(field, `${field} must be one of ${words.join(', ')}, or empty for any`);
}

export const checkStatusFilter = (value: string) => checkFilter('status', releaseStatuses, value);
export const checkChannelFilter = (value: string) => checkFilter('channel', releaseChannels, value);

/** What a state change looks at and sets. */
export interface ReleaseState {
  status: ReleaseStatus;
  published_at: Date | null;
  yanked_at: Date | null;
}

/** The change an action makes; null: the release is already where the action leads (answered as it is). */
export type ReleaseChange = Partial<ReleaseState> | null;

/** A draft becomes published, at the time given at creation or now; a yanked release stays yanked (409). */
export function publishing(r: ReleaseState, now: Date): ReleaseChange {
  if (r.status === 'published') return null;
  if (r.status === 'yanked')
    throw new AppError('conflict', 'this release is yanked: a yanked release is never published again');
  return { status: 'published', published_at: r.published_at ?? now };
}

/** A draft or a published release becomes yanked, now; yanking one again changes nothing. */
export function yanking(r: ReleaseState, now: Date): ReleaseChange {
  if (r.status === 'yanked') return null;
  return { status: 'yanked', yanked_at: now };
}

/** Only a draft may be deleted: a release once published was offered, and stays on record (yank it). */
export function checkDeletable(r: ReleaseState): void {
  if (r.status !== 'draft')
    throw new AppError('conflict', `this release is ${r.status}: only a draft can be deleted (yank it instead)`);
}
