import type { Request, RequestHandler, Response, Router } from 'express';
import { AppError } from '@licensing/runtime';
import { artifactFits, grantMessage, releaseJson, SEMVER_PATTERN, type Artifact, type Release } from '@licensing/proto';
import { principalOf } from '../auth/principal';
import type { Clients } from '../backends/clients';
import { checkId, type Parsed } from '../request-shapes/shapes';
import { appcastQuery, tauriQuery, updateCheck } from '../request-shapes/operations';
import { appcastXml } from './appcast';
import { publicBaseOf } from './public-base';
import { answerRefusal, grantFor, requestLicenseKey } from './release-grants';
import { registerRouteTable, withQuery, type RouteRow } from './route';

// Update feeds: what a running copy of the app is offered, from the releases its licence may have
// (proto/rules/release-access.ts) that the product service finds (FindReleases). Three shapes: the
// API's JSON, a Sparkle appcast, and the Tauri updater's answer.

export interface FeedDeps {
  clients: Clients;
  /** PUBLIC_BASE_URL ('' = the address each request came to). */
  publicBaseUrl: string;
}

const SEMVER = new RegExp(SEMVER_PATTERN);
/** Releases an appcast lists at most: Sparkle picks the newest it may install among them. */
const APPCAST_ITEMS = 20;

interface FeedAsk {
  productId: string;
  newerThan: string;
  platform: string;
  arch: string;
  channel: string;
  limit: number;
}

/** The releases a feed offers the licence behind the request (ReleaseRefused when it may have none). */
async function offered(deps: FeedDeps, res: Response, ask: FeedAsk, sentKey?: string): Promise<Release[]> {
  const key = requestLicenseKey(res, sentKey);
  if (!key)
    throw AppError.invalid(
      'license_key',
      'an update feed answers for a licence: send License <key>, or license_key with an API key',
    );
  const grant = await grantFor(deps.clients, res, key, ask.productId);
  const out = await deps.clients.products.findReleases({
    account_id: principalOf(res).accountId,
    product_id: ask.productId,
    grant: grantMessage(grant),
    newer_than: ask.newerThan,
    platform: ask.platform,
    arch: ask.arch,
    channel: ask.channel,
    limit: ask.limit,
  });
  return out.data;
}

/** The file of a release for the machine: an exact match first, then one for any platform or arch. */
export function bestArtifact(release: Release, platform: string, arch: string): Artifact | undefined {
  const fitting = release.artifacts.filter((a) => artifactFits(a, platform, arch));
  const score = (a: Artifact) => (a.platform === platform ? 2 : 0) + (a.arch === arch ? 1 : 0);
  return fitting.sort((a, b) => score(b) - score(a))[0];
}

/** Where an app downloads a release's file (with its credential; `withKey` puts the key in the query). */
export function artifactUrl(base: string, release: Release, filename: string, withKey?: string): string {
  const url = `${base}/api/v1/releases/${release.id}/artifacts/${encodeURIComponent(filename)}`;
  return withKey ? `${url}?license_key=${encodeURIComponent(withKey)}` : url;
}

function checkVersion(field: string, version: string): string {
  if (!SEMVER.test(version))
    throw AppError.invalid(field, `${field} must be a Semantic Versioning 2.0.0 version, such as 1.4.2`);
  return version;
}

const productIdOf = (req: Request) => checkId('id', 'prod', String(req.params.id));

/**
 * A feed's handler: what the request asks (its query checked against `shape`), the releases the
 * licence is offered (or its refusal, 403, sent), then the feed's own answer of them.
 */
function feed<S extends typeof updateCheck | typeof appcastQuery | typeof tauriQuery>(
  shape: S,
  askOf: (req: Request, query: Parsed<S>) => FeedAsk,
  answer: (
    ctx: { req: Request; res: Response; deps: FeedDeps; ask: FeedAsk; key?: string },
    releases: Release[],
  ) => void,
) {
  return (deps: FeedDeps): RequestHandler =>
    withQuery(shape, async (req, res, query) => {
      const ask = askOf(req, query);
      const sent = query.license_key;
      let releases: Release[];
      try {
        releases = await offered(deps, res, ask, sent);
      } catch (err) {
        return answerRefusal(res, err);
      }
      answer({ req, res, deps, ask, key: sent }, releases);
    });
}

const updateAnswer = feed(
  updateCheck,
  (req, query) => ({
    productId: productIdOf(req),
    newerThan: checkVersion('version', query.version!),
    platform: query.platform ?? '',
    arch: query.arch ?? '',
    channel: query.channel ?? 'stable',
    limit: 1,
  }),
  ({ req, res, deps, ask }, [release]) => {
    const artifact = release && bestArtifact(release, ask.platform, ask.arch);
    if (!release || !artifact) return void res.json({ update_available: false });
    res.json({
      update_available: true,
      release: releaseJson(release),
      artifact: {
        filename: artifact.filename,
        platform: artifact.platform,
        arch: artifact.arch,
        url: artifactUrl(publicBaseOf(req, deps.publicBaseUrl), release, artifact.filename),
        size: artifact.size,
        sha256: artifact.sha256,
        signature: artifact.signature || null,
      },
    });
  },
);

const appcast = feed(
  appcastQuery,
  (req, query) => ({
    productId: productIdOf(req),
    newerThan: '',
    platform: 'macos',
    arch: '',
    channel: query.channel ?? 'stable',
    limit: APPCAST_ITEMS,
  }),
  ({ req, res, deps, ask, key }, releases) => {
    // Sparkle downloads the enclosure without headers: the link carries the key the feed was read with.
    const own = requestLicenseKey(res, key)!;
    const base = publicBaseOf(req, deps.publicBaseUrl);
    const items = releases.flatMap((release) => {
      const artifact = bestArtifact(release, 'macos', '');
      return artifact ? [{ release, artifact, url: artifactUrl(base, release, artifact.filename, own) }] : [];
    });
    res.type('application/rss+xml; charset=utf-8').set('Cache-Control', 'private, no-store');
    res.send(appcastXml(`${base}/api/v1/products/${ask.productId}/appcast.xml`, items));
  },
);

/** Tauri's names for systems and processors, as its updater sends them ({{target}}, {{arch}}). */
const TAURI_TARGETS: Record<string, string> = { darwin: 'macos', macos: 'macos', windows: 'windows', linux: 'linux' };
const TAURI_ARCHS: Record<string, string> = { x86_64: 'x86_64', aarch64: 'aarch64', universal: 'universal' };

const tauri = feed(
  tauriQuery,
  (req) => {
    const platform = TAURI_TARGETS[String(req.params.target)];
    if (!platform) throw AppError.invalid('target', `target must be one of ${Object.keys(TAURI_TARGETS).join(', ')}`);
    const arch = TAURI_ARCHS[String(req.params.arch)];
    if (!arch) throw AppError.invalid('arch', `arch must be one of ${Object.keys(TAURI_ARCHS).join(', ')}`);
    const newerThan = checkVersion('current_version', String(req.params.current_version));
    return { productId: productIdOf(req), newerThan, platform, arch, channel: 'stable', limit: 1 };
  },
  ({ req, res, deps, ask, key }, [release]) => {
    const artifact = release && bestArtifact(release, ask.platform, ask.arch);
    // Tauri's updater reads 204 as "up to date".
    if (!release || !artifact) return void res.status(204).end();
    res.json({
      version: release.version,
      notes: release.notes,
      pub_date: release.published_at,
      url: artifactUrl(publicBaseOf(req, deps.publicBaseUrl), release, artifact.filename, key),
      signature: artifact.signature,
    });
  },
);

export const updateFeedRouteTable: readonly RouteRow<FeedDeps>[] = [
  { method: 'get', path: '/products/:id/updates', role: 'read_only', handler: updateAnswer },
  { method: 'get', path: '/products/:id/appcast.xml', role: 'read_only', handler: appcast },
  {
    method: 'get',
    path: '/products/:id/updates/tauri/:target/:arch/:current_version',
    role: 'read_only',
    handler: tauri,
  },
];

export function updateFeedRoutes(router: Router, deps: FeedDeps): void {
  registerRouteTable(router, updateFeedRouteTable, deps);
}
