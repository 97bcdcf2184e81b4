import type { ValidateLicenseRequest } from '../gen/licensing/v1/license';
import type { ReleaseGrant } from '../gen/licensing/v1/product';
import { missingEntitlements } from './entitlements';
import { releaseChannels, type ExpirationStrategy, type NextAction, type ReleaseChannel } from './vocabulary';

// Which releases a licence may download and be offered, judged from its validation answer. The gateway
// makes the grant (one validation) and checks one release with it for a download; the product service
// filters a product's releases with it for the update feeds. Pure.

/** What a licence may have: these channels, releases needing no entitlement it lacks, published before a time. */
export interface DownloadGrant {
  channels: ReleaseChannel[];
  entitlements: string[];
  /** Only releases published before this (an expired licence under maintain_access); null: any. */
  publishedBefore: Date | null;
}

/** A refusal, in the validation answer's words (403 with its code and next_action). */
export interface ReleaseRefusal {
  code: string;
  detail: string;
  next_action: NextAction | string;
}

/** The parts of a validation answer (ValidateLicenseResponse) a grant is made from. */
export interface AnswerForGrant {
  valid: boolean;
  code: string;
  detail: string;
  next_action: string;
  license?: {
    entitlements: readonly string[];
    expires_at: string;
    policy?: { expiration_strategy?: string };
  };
}

/** Refusals about a machine's seat, not the licence: downloading an installer needs no activation. */
const SEAT_CODES = new Set(['not_activated', 'activation_limit_reached', 'lease_expired']);

/** The entitlement that opens a channel besides stable: channel.beta, channel.alpha, channel.dev. */
export const channelEntitlement = (channel: ReleaseChannel): string => `channel.${channel}`;

/** The strategy of a licence's policy ('' on licences stored before it existed: restrict). */
export const expirationStrategyOf = (policy: { expiration_strategy?: string } | undefined): ExpirationStrategy =>
  (policy?.expiration_strategy || 'restrict') as ExpirationStrategy;

/**
 * The validation a grant is judged from: of the licence's product, with the full view (its policy and
 * entitlements), and never counted as one of the app's validations (a download, a feed, a page).
 */
export const grantValidation = (accountId: string, key: string, productId: string): ValidateLicenseRequest => ({
  account_id: accountId,
  key,
  product_id: productId,
  fingerprint: '',
  key_scope: 'full',
  want_facts: false,
  from_store: false,
  entitlements: [],
  already_counted: true,
});

/** The grant of a validation answer, or the refusal to send. */
export function releaseGrant(answer: AnswerForGrant): { grant: DownloadGrant } | { refusal: ReleaseRefusal } {
  const license = answer.license;
  const refusal = { refusal: { code: answer.code, detail: answer.detail, next_action: answer.next_action } };
  if (!license) return refusal;
  const entitlements = [...license.entitlements];
  const channels = releaseChannels.filter((c) => c === 'stable' || entitlements.includes(channelEntitlement(c)));
  if (answer.valid || SEAT_CODES.has(answer.code)) return { grant: { channels, entitlements, publishedBefore: null } };
  if (answer.code === 'expired' && license.expires_at && expirationStrategyOf(license.policy) === 'maintain_access')
    return { grant: { channels, entitlements, publishedBefore: new Date(license.expires_at) } };
  return refusal;
}

/** A release as the grant judges it. */
export interface ReleaseForGrant {
  channel: string;
  status: string;
  entitlements: readonly string[];
  /** RFC 3339 ('' while a draft). */
  published_at: string;
}

/** Why the grant does not cover a published release (a refusal to send), or null when it does. */
export function releaseRefusal(release: ReleaseForGrant, grant: DownloadGrant): ReleaseRefusal | null {
  if (release.status !== 'published')
    return {
      code: 'release_unavailable',
      detail: release.status === 'yanked' ? 'this release was withdrawn' : 'this release is not published',
      next_action: 'none',
    };
  if (!grant.channels.includes(release.channel as ReleaseChannel))
    return {
      code: 'entitlements_missing',
      detail: `the ${release.channel} channel needs the entitlement ${channelEntitlement(release.channel as ReleaseChannel)}`,
      next_action: 'contact_vendor',
    };
  const missing = missingEntitlements(release.entitlements, grant.entitlements, undefined);
  if (missing.length)
    return {
      code: 'entitlements_missing',
      detail: `this release needs ${missing.length === 1 ? 'the entitlement' : 'the entitlements'} ${missing.join(', ')}`,
      next_action: 'contact_vendor',
    };
  if (grant.publishedBefore && !(new Date(release.published_at) < grant.publishedBefore))
    return {
      code: 'expired',
      detail: `the licence expired; releases published before ${grant.publishedBefore.toISOString()} stay available`,
      next_action: 'renew',
    };
  return null;
}

/** The channels a feed request asking for `channel` offers: it and every more stable one. */
export function channelsUpTo(channel: string): ReleaseChannel[] {
  const at = releaseChannels.indexOf((channel || 'stable') as ReleaseChannel);
  return releaseChannels.slice(0, at < 0 ? 1 : at + 1);
}

/** A grant as FindReleases carries it. */
export const grantMessage = (g: DownloadGrant): ReleaseGrant => ({
  channels: g.channels,
  entitlements: g.entitlements,
  published_before: g.publishedBefore?.toISOString() ?? '',
});

/** A grant from FindReleases' message (channels outside the vocabulary dropped). */
export const grantOf = (m: ReleaseGrant | undefined): DownloadGrant => ({
  channels: (m?.channels ?? []).filter((c): c is ReleaseChannel => (releaseChannels as readonly string[]).includes(c)),
  entitlements: [...(m?.entitlements ?? [])],
  publishedBefore: m?.published_before ? new Date(m.published_before) : null,
});
