import {
  appcastQuery,
  artifactDownload,
  artifactUpload,
  releaseList,
  tauriQuery,
  updateCheck,
} from '../request-shapes/operations';
import { listOf, ref } from './schemas';
import { type Op, op, pathParam, problem, productId } from './operation';
import { queryParameters } from './shape-schema';

// A product's releases: its versions, drafts until published, yanked when withdrawn.
const releaseId = pathParam('id', 'Release id (rel_…)');
const filename = pathParam('filename', 'The file name (one name, no path; at most 255 bytes)', {
  type: 'string',
  maxLength: 765,
});
const signatureHeader = {
  name: 'X-Artifact-Signature',
  in: 'header',
  required: false,
  description: "A signature of the file (Sparkle's EdDSA, minisign, …), stored and handed out as is",
  schema: { type: 'string', maxLength: 4096 },
};
/** The refusal of a licence that may not have a release or an update: the validation answer's words. */
const refusedLicence = {
  403: {
    ...problem,
    description:
      'The licence may not have it: `validation_code` and `next_action` say why and what to do (expired → renew; entitlements_missing → contact_vendor; …)',
  },
};
const judged = (o: Op): Op => ({ ...o, responses: { ...(o.responses as object), ...refusedLicence } });

export const releasePaths: Record<string, Record<string, Op>> = {
  '/api/v1/products/{id}/releases': {
    post: op('createRelease', {
      summary: 'Create a release (a draft)',
      tag: 'Releases',
      description:
        'version is Semantic Versioning 2.0.0 and exists once per product (409 for a duplicate, build metadata aside); channel defaults from the pre-release tag. A product has at most 1,000 releases (409 for one more).',
      params: [productId],
      body: 'ReleaseCreate',
      ok: { 201: { description: 'The draft (Location names it)', schema: ref('Release') } },
    }),
    get: op('listReleases', {
      summary: "List a product's releases",
      tag: 'Releases',
      params: [productId, ...queryParameters(releaseList)],
      ok: {
        200: {
          description: 'A page of releases, newest version first (Semantic Versioning precedence)',
          schema: listOf('Release'),
        },
      },
    }),
  },
  '/api/v1/releases/{id}': {
    get: op('getRelease', {
      summary: 'Get a release',
      tag: 'Releases',
      params: [releaseId],
      ok: { 200: { description: 'The release', schema: ref('Release') } },
    }),
    delete: op('deleteRelease', {
      summary: 'Delete a draft',
      tag: 'Releases',
      description: 'Drafts only: a published or yanked release is 409 (yank it instead).',
      params: [releaseId],
      ok: { 200: { description: 'The release, deleted', schema: ref('Release') } },
    }),
  },
  '/api/v1/releases/{id}/publish': {
    post: op('publishRelease', {
      summary: 'Publish a release',
      tag: 'Releases',
      description:
        'A draft becomes published (published_at: the one given at creation, or now) and release.published is sent. Publishing a published release answers it as it is; a yanked one is 409.',
      params: [releaseId],
      ok: { 200: { description: 'The release, published', schema: ref('Release') } },
    }),
  },
  '/api/v1/releases/{id}/yank': {
    post: op('yankRelease', {
      summary: 'Yank a release',
      tag: 'Releases',
      description:
        'It is never offered again and its downloads are refused; release.yanked is sent. Yanking a yanked release answers it as it is.',
      params: [releaseId],
      ok: { 200: { description: 'The release, yanked', schema: ref('Release') } },
    }),
  },
  '/api/v1/releases/{id}/artifacts/{filename}': {
    put: op('uploadArtifact', {
      summary: 'Upload a file to a draft release',
      tag: 'Releases',
      description:
        'The body is the file itself, streamed (never held whole), up to ARTIFACT_MAX_BYTES (default 2 GiB; 413 past it, nothing kept). The server computes size and sha256. A file of the same name replaces the earlier one (200). 409 once the release is published or yanked, or past 50 files; 400 for a filename with a path separator, "..", a control character or over 255 bytes.',
      params: [releaseId, filename, ...queryParameters(artifactUpload), signatureHeader],
      rawBody: { 'application/octet-stream': { type: 'string', format: 'binary' } },
      ok: {
        200: { description: 'The file, replacing one of the same name', schema: ref('Artifact') },
        201: { description: 'The file, stored', schema: ref('Artifact') },
      },
    }),
    get: judged(
      op('downloadArtifact', {
        summary: 'Download a file',
        tag: 'Releases',
        description:
          "With a `License` credential (or ?license_key= alone, or an API key naming the licence with it): the licence must validate, have the release's entitlements (and channel.beta, channel.alpha or channel.dev off the stable channel), and, once expired under maintain_access, the release must be older than its expiry. API keys of full scope download any file of the account. 303 to a link that works for 5 minutes (then 410); the download is counted.",
        params: [releaseId, filename, ...queryParameters(artifactDownload)],
        ok: { 303: { description: 'Location: the link (the body repeats it)', schema: ref('DownloadLink') } },
        app: true,
      }),
    ),
  },
  '/api/v1/products/{id}/updates': {
    get: judged(
      op('checkForUpdate', {
        summary: 'Check for an update',
        tag: 'Releases',
        description:
          'The newest published release newer than `version` that the licence may have, on `channel` or a more stable one, with a file for `platform` and `arch`. Its `artifact.url` downloads it (with the same credential).',
        params: [productId, ...queryParameters(updateCheck)],
        ok: { 200: { description: 'An update, or none', schema: ref('UpdateCheck') } },
        app: true,
      }),
    ),
  },
  '/api/v1/products/{id}/appcast.xml': {
    get: judged(
      op('appcast', {
        summary: 'Sparkle appcast',
        tag: 'Releases',
        description:
          "The releases the licence may have, newest first, as a Sparkle appcast (macOS files). Sparkle cannot always send headers: the key may come as ?license_key=, and each enclosure's URL carries it (never logged).",
        params: [productId, ...queryParameters(appcastQuery)],
        ok: {
          200: {
            description: 'RSS 2.0 with the Sparkle namespace',
            schema: { type: 'string' },
            media: 'application/rss+xml',
          },
        },
        app: true,
      }),
    ),
  },
  '/api/v1/products/{id}/updates/tauri/{target}/{arch}/{current_version}': {
    get: judged(
      op('tauriUpdate', {
        summary: "Tauri updater's endpoint",
        tag: 'Releases',
        description: "The Tauri updater's dynamic server format: 200 with the update, 204 when up to date.",
        params: [
          productId,
          pathParam('target', 'darwin, macos, windows or linux', { type: 'string', maxLength: 20 }),
          pathParam('arch', 'x86_64, aarch64 or universal', { type: 'string', maxLength: 20 }),
          pathParam('current_version', 'The running version (semver)', { type: 'string', maxLength: 64 }),
          ...queryParameters(tauriQuery),
        ],
        ok: {
          200: { description: 'The update', schema: ref('TauriUpdate') },
          204: { description: 'Up to date' },
        },
        app: true,
      }),
    ),
  },
  '/api/v1/downloads/{token}': {
    get: op('downloadFile', {
      summary: 'A download link',
      tag: 'Releases',
      description:
        'The link a download answered with (files kept by the gateway itself; an S3-compatible store links to its own presigned URL instead). No credential: the link is one. 410 once its 5 minutes are over, 404 for a link not made here.',
      params: [pathParam('token', 'The signed link', { type: 'string', maxLength: 2000 })],
      ok: {
        200: {
          description: 'The file',
          schema: { type: 'string', format: 'binary' },
          media: 'application/octet-stream',
        },
      },
      validateScope: true,
    }),
  },
  '/api/v1/uploads/{token}': {
    put: op('uploadWithGrant', {
      summary: 'Upload a file with an upload grant',
      tag: 'Releases',
      description:
        "How the dashboard's Releases page uploads from the browser. No credential: the grant is one, made for a signed-in developer for one file of a draft (its filename, platform, arch and signature), working once, for 15 minutes. The body is the file, streamed as for PUT /api/v1/releases/{id}/artifacts/{filename}, with the same answers (413 past ARTIFACT_MAX_BYTES, 409 once the release is no draft, 400 for a body that broke off). 404 for a grant that is unknown, expired or used already.",
      params: [pathParam('token', 'The upload grant (never logged)', { type: 'string', maxLength: 2000 })],
      rawBody: { 'application/octet-stream': { type: 'string', format: 'binary' } },
      ok: {
        200: { description: 'The file, replacing one of the same name', schema: ref('Artifact') },
        201: { description: 'The file, stored', schema: ref('Artifact') },
      },
      validateScope: true,
    }),
  },
};
