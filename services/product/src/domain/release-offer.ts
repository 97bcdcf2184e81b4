import { AppError } from '@licensing/runtime';
import {
  artifactArchs,
  artifactFits,
  artifactPlatforms,
  channelsUpTo,
  grantOf,
  releaseRefusal,
  type DownloadGrant,
  type FindReleasesRequest,
  type ReleaseChannel,
  type ReleaseStatus,
} from '@licensing/proto';
import { checkChannelFilter, checkFilter } from './release';
import { compareVersions, newestFirst, parseVersion, type Version } from './release-version';

// What an update feed offers: the published releases of a product a licence's grant covers
// (proto/rules/release-access.ts judges one release), on the channels asked for, newer than the
// version the caller runs, with a file for its machine, newest version first. Pure: the use case reads
// the product's published releases and this picks among them.

/** The most releases one FindReleases call answers. */
export const FIND_RELEASES_LIMIT_MAX = 100;

/** A FindReleases request, checked. */
export interface OfferQuery {
  /** The grant, its channels narrowed to those the request asks for. */
  grant: DownloadGrant;
  /** Only versions of higher precedence; null: any. */
  newerThan: Version | null;
  /** '' = no condition. */
  platform: string;
  arch: string;
  limit: number;
}

/** What choosing a release reads of it. */
export interface OfferCandidate {
  version: string;
  channel: ReleaseChannel;
  status: ReleaseStatus;
  entitlements: readonly string[];
  published_at: Date | null;
  artifacts: readonly { platform: string; arch: string }[];
}

/** The grant of the request, refused (400) when its time is no time: it would otherwise hide every release. */
function checkGrant(req: Pick<FindReleasesRequest, 'grant'>): DownloadGrant {
  const grant = grantOf(req.grant);
  if (grant.publishedBefore && Number.isNaN(grant.publishedBefore.getTime()))
    throw AppError.invalid('grant.published_before', 'grant.published_before must be an RFC 3339 time');
  return grant;
}

/** A FindReleases request's conditions, each checked; the first problem is refused naming its field. */
export function checkOfferQuery(req: FindReleasesRequest): OfferQuery {
  const channel = checkChannelFilter(req.channel);
  const platform = checkFilter('platform', artifactPlatforms, req.platform);
  const arch = checkFilter('arch', artifactArchs, req.arch);
  const newerText = req.newer_than.trim();
  const newerThan = newerText ? parseVersion(newerText) : null;
  if (newerThan === undefined)
    throw AppError.invalid(
      'newer_than',
      'newer_than must be a Semantic Versioning 2.0.0 version, such as 1.4.2 (no "v" before it), or empty for any',
    );
  if (!Number.isInteger(req.limit) || req.limit < 0 || req.limit > FIND_RELEASES_LIMIT_MAX)
    throw AppError.invalid('limit', `limit must be 1 to ${FIND_RELEASES_LIMIT_MAX} (0 is 1)`);
  const grant = checkGrant(req);
  const asked = channelsUpTo(channel);
  return {
    grant: { ...grant, channels: grant.channels.filter((c) => asked.includes(c)) },
    newerThan,
    platform,
    arch,
    limit: req.limit || 1,
  };
}

/** Whether the query offers this release: covered by the grant, newer than asked, with a file that fits. */
export function isOffered(r: OfferCandidate, q: OfferQuery): boolean {
  const judged = { ...r, published_at: r.published_at?.toISOString() ?? '' };
  if (releaseRefusal(judged, q.grant)) return false;
  if (q.newerThan) {
    const v = parseVersion(r.version);
    if (!v || compareVersions(v, q.newerThan) <= 0) return false;
  }
  if (!q.platform && !q.arch) return true;
  return r.artifacts.some((a) => artifactFits(a, q.platform, q.arch));
}

/** The releases the query offers, newest version first (Semantic Versioning precedence), at most its limit. */
export const offered = <T extends OfferCandidate>(releases: readonly T[], q: OfferQuery): T[] =>
  newestFirst(releases.filter((r) => isOffered(r, q))).slice(0, q.limit);
