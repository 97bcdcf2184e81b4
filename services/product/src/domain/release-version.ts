import { SEMVER_PATTERN, type ReleaseChannel } from '@licensing/proto';

// Semantic Versioning 2.0.0 (https://semver.org): what a version is, how two compare (their
// precedence), and which channel a version's pre-release tag implies. Pure: no store, no clock.

const SEMVER = new RegExp(SEMVER_PATTERN);

export interface Version {
  /** Major, minor and patch as their digits: no leading zeros, any length (compared by value, not as numbers that overflow). */
  core: [string, string, string];
  /** The pre-release identifiers (`1.0.0-beta.2`: beta, 2); none for a release. */
  prerelease: string[];
  /** The build metadata identifiers (`1.0.0+build.5`: build, 5); no part of precedence. */
  build: string[];
}

/** A version from its text as given (no trimming, no `v`); undefined: not Semantic Versioning 2.0.0. */
export function parseVersion(text: string): Version | undefined {
  const m = SEMVER.exec(text);
  if (!m) return undefined;
  return {
    core: [m[1], m[2], m[3]],
    prerelease: m[4] ? m[4].split('.') : [],
    build: m[5] ? m[5].split('.') : [],
  };
}

const NUMERIC = /^\d+$/;

/** Two digit strings without leading zeros, by value: the longer is the larger, else the text decides. */
const byValue = (a: string, b: string) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);

/** Two pre-release identifiers: numbers by value and below words; words in ASCII order. */
function compareIdentifiers(a: string, b: string): number {
  const an = NUMERIC.test(a);
  const bn = NUMERIC.test(b);
  if (an && bn) return byValue(a, b);
  if (an !== bn) return an ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Precedence (semver.org, item 11): negative when `a` comes before `b`, 0 when they have the same
 * precedence (build metadata is ignored: 1.0.0+a and 1.0.0+b are equal), positive after. Major, minor
 * and patch by value; then a pre-release comes before its release; then the pre-release identifiers
 * one by one, a shorter list before a longer one it begins.
 */
export function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) {
    const c = byValue(a.core[i], b.core[i]);
    if (c) return Math.sign(c);
  }
  if (!a.prerelease.length || !b.prerelease.length) return Math.sign(b.prerelease.length - a.prerelease.length);
  for (let i = 0; i < Math.min(a.prerelease.length, b.prerelease.length); i++) {
    const c = compareIdentifiers(a.prerelease[i], b.prerelease[i]);
    if (c) return Math.sign(c);
  }
  return Math.sign(a.prerelease.length - b.prerelease.length);
}

/**
 * The version without its build metadata: what makes two versions the same version of a product.
 * Versions of equal precedence are one version (1.0.0+a and 1.0.0+b would be the same update to
 * offer, and no order could tell them apart), and without build metadata equal precedence is equal
 * text, because no identifier may have a leading zero: so this text is what the unique index holds.
 */
export const versionKey = (v: Version): string =>
  `${v.core.join('.')}${v.prerelease.length ? `-${v.prerelease.join('.')}` : ''}`;

/**
 * The channel a version is on unless one is given: its pre-release tag's first identifier when that
 * names a channel (beta, alpha, dev; any case), a release candidate (rc) on beta with the betas, and
 * stable for a release or any other tag.
 */
export function defaultChannel(v: Version): ReleaseChannel {
  const tag = (v.prerelease[0] ?? '').toLowerCase();
  if (tag === 'rc') return 'beta';
  return tag === 'beta' || tag === 'alpha' || tag === 'dev' ? tag : 'stable';
}

/** Newest version first: by precedence, highest first (stored versions all parse; one that did not would go last). */
export function newestFirst<T extends { version: string }>(items: readonly T[]): T[] {
  return items
    .map((item) => ({ item, v: parseVersion(item.version) }))
    .sort((a, b) => (a.v && b.v ? compareVersions(b.v, a.v) : a.v ? -1 : b.v ? 1 : 0))
    .map(({ item }) => item);
}
