import { randomBytes } from 'node:crypto';
import type { Request, RequestHandler, Response, Router } from 'express';
import { AppError, type Clock, type Logger } from '@licensing/runtime';
import {
  ARTIFACT_SIGNATURE_MAX_LENGTH,
  artifactFilenameProblem,
  DOWNLOAD_LINK_TTL_SECONDS,
  releaseJson,
  releaseRefusal,
  type Release,
} from '@licensing/proto';
import { ArtifactTooLarge, type ArtifactStore } from '../artifacts/artifact-store';
import { contentDisposition } from '../artifacts/content-disposition';
import type { DownloadLinks } from '../artifacts/download-links';
import { principalOf } from '../auth/principal';
import type { Clients } from '../backends/clients';
import { closeAfterAnswer } from '../http/refused-upload';
import { checkId } from '../request-shapes/shapes';
import { artifactDownload, artifactUpload } from '../request-shapes/operations';
import { answerRefusal, grantFor, requestLicenseKey, ReleaseRefused } from './release-grants';
import { registerRouteTable, withQuery, type RouteRow } from './route';
import { publicBaseOf } from './public-base';

// A release's files: uploaded as the raw body of a PUT (with an API key, or with an upload grant the
// dashboard got for a browser), streamed into the artifact store (never held whole) while counted and
// hashed; recorded by the product service; downloaded through a link that works for 5 minutes (the
// store's presigned URL, or the gateway's own signed one it then serves).

export interface ArtifactDeps {
  clients: Clients;
  store: ArtifactStore;
  links: DownloadLinks;
  /** ARTIFACT_MAX_BYTES. */
  maxBytes: number;
  /** PUBLIC_BASE_URL ('' = the address each request came to). */
  publicBaseUrl: string;
  clock: Clock;
  log: Logger;
}

const releaseId = (raw: unknown) => checkId('id', 'rel', String(raw));

/** The filename of the path, checked (400 naming it). */
function filenameOf(req: Request): string {
  const name = String(req.params.filename);
  const problem = artifactFilenameProblem(name);
  if (problem) throw AppError.invalid('filename', problem);
  return name;
}

/** X-Artifact-Signature as sent ('' without one): printable ASCII, at most 4 KiB. */
function signatureOf(req: Request): string {
  const sent = req.get('x-artifact-signature') ?? '';
  if (sent.length > ARTIFACT_SIGNATURE_MAX_LENGTH || !/^[\x20-\x7e]*$/.test(sent))
    throw AppError.invalid(
      'X-Artifact-Signature',
      `X-Artifact-Signature must be printable ASCII of at most ${ARTIFACT_SIGNATURE_MAX_LENGTH} characters (e.g. base64)`,
    );
  return sent.trim();
}

/** What one upload stores and records: a file of a release of an account, named by the route or by a grant. */
interface UploadTarget {
  accountId: string;
  releaseId: string;
  filename: string;
  platform: string;
  arch: string;
  signature: string;
}

/** Refuses before reading a byte: a declared length past the limit, or a release that takes no files. */
async function checkUploadAllowed(
  deps: ArtifactDeps,
  req: Request,
  res: Response,
  target: UploadTarget,
): Promise<void> {
  const declared = Number(req.get('content-length') ?? 0);
  if (declared > deps.maxBytes) {
    closeAfterAnswer(req, res);
    throw new AppError('payload_too_large', `the file is larger than ${deps.maxBytes} bytes (ARTIFACT_MAX_BYTES)`);
  }
  const release = await deps.clients.products.getRelease({ account_id: target.accountId, id: target.releaseId });
  if (release.status !== 'draft') {
    closeAfterAnswer(req, res);
    throw new AppError('conflict', `this release is ${release.status}: files can only be added to a draft`);
  }
}

/** Streams the body into the store; 413 past the limit, 400 for a body that broke off (nothing kept either way). */
async function storeBody(deps: ArtifactDeps, req: Request, res: Response, key: string) {
  try {
    return await deps.store.put(key, req, deps.maxBytes);
  } catch (err) {
    if (err instanceof ArtifactTooLarge) {
      closeAfterAnswer(req, res);
      throw new AppError('payload_too_large', `the file is larger than ${deps.maxBytes} bytes (ARTIFACT_MAX_BYTES)`);
    }
    if (req.destroyed || req.readableAborted)
      throw new AppError('invalid_request', 'the upload broke off before the whole file arrived');
    throw storeUnavailable(deps, err);
  }
}

/**
 * A failure of the store itself (S3 away, a disk full): logged, and answered 503 so the client retries,
 * never 500. Refusals it makes on purpose (a file that is gone: not_found) pass as they are.
 */
function storeUnavailable(deps: Pick<ArtifactDeps, 'log' | 'store'>, err: unknown): AppError {
  if (err instanceof AppError) return err;
  deps.log.error({ err: String(err), store: deps.store.kind }, 'the release file store failed');
  return new AppError('service_unavailable', 'the release file store is not available; try again shortly');
}

/**
 * The upload itself, whoever allowed it (an API key on PUT …/artifacts/{filename}, a grant on PUT
 * /uploads/{token}): checked before a byte is read, streamed into the store, recorded with AddArtifact
 * (the stored file removed if that fails), answered with the file (201, or 200 for a replacement).
 */
async function storeUpload(deps: ArtifactDeps, req: Request, res: Response, target: UploadTarget): Promise<void> {
  await checkUploadAllowed(deps, req, res, target);
  const { accountId, releaseId: id, filename } = target;
  const key = `${accountId}/${id}/${randomBytes(12).toString('hex')}`;
  const stored = await storeBody(deps, req, res, key);
  let out: Awaited<ReturnType<Clients['products']['addArtifact']>>;
  try {
    out = await deps.clients.products.addArtifact({
      account_id: accountId,
      release_id: id,
      artifact: {
        filename,
        platform: target.platform,
        arch: target.arch,
        size: stored.size,
        sha256: stored.sha256,
        signature: target.signature,
        downloads: 0,
        created_at: '',
        storage_key: key,
      },
    });
  } catch (err) {
    // Not recorded (published meanwhile, too many files): the file is nobody's.
    await deps.store.remove(key).catch(() => undefined);
    throw err;
  }
  if (out.replaced_storage_key) removeQuietly(deps, out.replaced_storage_key);
  const artifact = releaseJson(out.release!).artifacts.find((a) => a.filename === filename);
  res.status(out.replaced_storage_key ? 200 : 201).json(artifact);
}

function uploadArtifact(deps: ArtifactDeps): RequestHandler {
  return withQuery(artifactUpload, async (req, res, query) => {
    // The header first: a bad one is named whatever the path holds (as every route's headers are).
    const signature = signatureOf(req);
    await storeUpload(deps, req, res, {
      releaseId: releaseId(req.params.id),
      filename: filenameOf(req),
      signature,
      accountId: principalOf(res).accountId,
      platform: query.platform ?? 'any',
      arch: query.arch ?? 'any',
    });
  });
}

/** A replaced file is removed after the answer; one left behind is only space (docs/operations.md). */
function removeQuietly(deps: ArtifactDeps, key: string): void {
  deps.store
    .remove(key)
    .catch((err: unknown) => deps.log.warn({ err: String(err) }, 'a replaced release file was not removed'));
}

/**
 * The release a download asks for, if the request may have it: any of its account's with an API key of
 * full scope and no licence named; else a published one the licence's grant covers (ReleaseRefused).
 */
async function downloadableRelease(deps: ArtifactDeps, res: Response, id: string, sentKey: string | undefined) {
  const p = principalOf(res);
  const release = await deps.clients.products.getRelease({ account_id: p.accountId, id });
  const key = p.scope === 'full' ? undefined : requestLicenseKey(res, sentKey);
  if (p.scope !== 'full' && !key)
    throw AppError.invalid('license_key', 'license_key is required with a validate-scope key: the licence downloading');
  if (key === undefined) return release;
  // A draft is not there for a licence at all.
  if (release.status === 'draft') throw AppError.notFound('release');
  const grant = await grantFor(deps.clients, res, key, release.product_id);
  const refusal = releaseRefusal(release, grant);
  if (refusal) throw new ReleaseRefused(refusal);
  return release;
}

/** The link a download goes to: the store's presigned URL, or the gateway's own signed link. */
async function linkTo(deps: ArtifactDeps, req: Request, storageKey: string, filename: string): Promise<string> {
  const presigned = await deps.store
    .presignedUrl(storageKey, filename, DOWNLOAD_LINK_TTL_SECONDS)
    .catch((err: unknown) => {
      throw storeUnavailable(deps, err);
    });
  if (presigned) return presigned;
  const expires = Math.floor(deps.clock.now().getTime() / 1000) + DOWNLOAD_LINK_TTL_SECONDS;
  const token = deps.links.sign({ key: storageKey, filename, expires });
  return `${publicBaseOf(req, deps.publicBaseUrl)}/api/v1/downloads/${token}`;
}

function downloadArtifact(deps: ArtifactDeps): RequestHandler {
  return withQuery(artifactDownload, async (req, res, query) => {
    const id = releaseId(req.params.id);
    const filename = filenameOf(req);
    let release: Release;
    try {
      release = await downloadableRelease(deps, res, id, query.license_key);
    } catch (err) {
      return answerRefusal(res, err);
    }
    const artifact = release.artifacts.find((a) => a.filename === filename);
    if (!artifact) throw AppError.notFound('file');
    const url = await linkTo(deps, req, artifact.storage_key, filename);
    await deps.clients.products.recordDownload({ account_id: principalOf(res).accountId, release_id: id, filename });
    const expiresAt = new Date(deps.clock.now().getTime() + DOWNLOAD_LINK_TTL_SECONDS * 1000).toISOString();
    res.status(303).location(url).json({ url, expires_at: expiresAt, size: artifact.size, sha256: artifact.sha256 });
  });
}

export const artifactRouteTable: readonly RouteRow<ArtifactDeps>[] = [
  { method: 'put', path: '/releases/:id/artifacts/:filename', role: 'developer', handler: uploadArtifact },
  { method: 'get', path: '/releases/:id/artifacts/:filename', role: 'read_only', handler: downloadArtifact },
];

export function artifactRoutes(router: Router, deps: ArtifactDeps): void {
  registerRouteTable(router, artifactRouteTable, deps);
}

/**
 * GET /api/v1/downloads/{token}: the file a gateway's own link names (no credential: the link is one),
 * streamed from the store; 410 once the link has expired, 404 for one not made here. Mounted before
 * the API's authentication.
 */
function servedDownload(deps: LinkDeps): RequestHandler {
  return async (req, res) => {
    // The token is a capability: logs and metrics name the route's template, never the path.
    const target = deps.links.verify(String(req.params.token), deps.clock.now().getTime());
    const { stream, size } = await deps.store.open(target.key).catch((err: unknown) => {
      throw storeUnavailable(deps, err);
    });
    res.status(200).set({
      'Content-Type': 'application/octet-stream',
      'Content-Length': String(size),
      'Content-Disposition': contentDisposition(target.filename),
      'Cache-Control': 'private, no-store',
    });
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  };
}

type LinkDeps = Pick<ArtifactDeps, 'store' | 'links' | 'clock' | 'log'>;

export const downloadLinkRouteTable: readonly RouteRow<LinkDeps>[] = [
  // No credential is asked (the link is one); read_only is the least any key needs, for the role table.
  { method: 'get', path: '/downloads/:token', role: 'read_only', handler: servedDownload },
];

/** The gateway's own download links, mounted before the API's authentication. */
export function downloadLinkRoutes(router: Router, deps: LinkDeps): void {
  registerRouteTable(router, downloadLinkRouteTable, deps);
}

/**
 * PUT /api/v1/uploads/{token}: a file sent with an upload grant (no credential: the grant is one, made by
 * the product service for the dashboard, which hands its token to the browser). The grant is redeemed
 * first (used up: one upload each; 404 for one unknown, expired or used), then the upload is the
 * artifact route's, for the release, filename, platform, arch and signature the grant names.
 */
function grantedUpload(deps: ArtifactDeps): RequestHandler {
  return async (req, res) => {
    // The token is a capability: logs and metrics name the route's template, never the path.
    let grant: Awaited<ReturnType<Clients['products']['redeemUploadGrant']>>;
    try {
      grant = await deps.clients.products.redeemUploadGrant({ token: String(req.params.token) });
    } catch (err) {
      // Refused before a byte of the body was read: the client still sending gets the answer.
      closeAfterAnswer(req, res);
      throw err;
    }
    await storeUpload(deps, req, res, {
      accountId: grant.account_id,
      releaseId: grant.release_id,
      filename: grant.filename,
      platform: grant.platform,
      arch: grant.arch,
      signature: grant.signature,
    });
  };
}

export const uploadGrantRouteTable: readonly RouteRow<ArtifactDeps>[] = [
  // No credential is asked (the grant is one, made for a developer); read_only is the least any key
  // needs, for the role table.
  { method: 'put', path: '/uploads/:token', role: 'read_only', handler: grantedUpload },
];

/** Uploads with a grant (the dashboard's), mounted before the API's authentication as download links are. */
export function uploadGrantRoutes(router: Router, deps: ArtifactDeps): void {
  registerRouteTable(router, uploadGrantRouteTable, deps);
}
