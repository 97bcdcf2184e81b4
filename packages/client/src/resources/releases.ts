import {
  describe,
  fileSegment,
  idempotencyKey,
  objectArg,
  optionalString,
  segment,
  type CreateOptions,
} from '../arguments';
import type { Transport } from '../http';
import { PageList, type Page } from '../pagination';
import type { Artifact, ArtifactArch, ArtifactPlatform, Release, ReleaseCreate, ReleaseListParams } from '../types';
import { prepareUpload, type UploadBody } from '../upload-body';

export interface ArtifactUploadOptions {
  /** What the file runs on: macos, windows, linux or any. */
  platform: ArtifactPlatform;
  /** x86_64, aarch64, universal (both) or any. */
  arch: ArtifactArch;
  /** Your own signature of the file (e.g. minisign or EdDSA, as text), handed to apps with it. */
  signature?: string;
  /** Limit of the upload, in ms, instead of the client's `timeoutMs` (a large file takes longer). */
  timeoutMs?: number;
}

/** /api/v1/products/{id}/releases and /api/v1/releases: a product's versions and their files. */
export class Releases {
  constructor(private readonly http: Transport) {}

  /**
   * A new release, a draft until publish(). Always sent with an Idempotency-Key (yours, or a random
   * one), so a retry never creates it twice. 409 for a version the product already has.
   */
  async create(productId: string, params: ReleaseCreate, options?: CreateOptions): Promise<Release> {
    return this.http.request({
      method: 'POST',
      path: `/api/v1/products/${segment(productId, 'product id')}/releases`,
      body: objectArg(params, 'release'),
      idempotent: false,
      idempotencyKey: idempotencyKey(options),
    });
  }

  async get(id: string): Promise<Release> {
    return this.http.request({ method: 'GET', path: this.path(id), idempotent: true });
  }

  /** Newest version first (Semantic Versioning precedence); filter by `channel` or `status`. */
  list(productId: string, params: ReleaseListParams = {}): PageList<Release, ReleaseListParams> {
    const path = `/api/v1/products/${segment(productId, 'product id')}/releases`;
    return new PageList(
      (query) => this.http.request<Page<Release>>({ method: 'GET', path, query, idempotent: true }),
      objectArg(params, 'list params'),
    );
  }

  // Publishing or yanking again answers the release as it is, so both are safe to repeat.
  /** A draft becomes published (release.published is sent); a yanked release is 409. */
  async publish(id: string): Promise<Release> {
    return this.http.request({ method: 'POST', path: `${this.path(id)}/publish`, idempotent: true });
  }

  /** Withdraws a release for good: never offered again, its downloads refused (release.yanked is sent). */
  async yank(id: string): Promise<Release> {
    return this.http.request({ method: 'POST', path: `${this.path(id)}/yank`, idempotent: true });
  }

  /**
   * Deletes a draft and its files, answering the release as it was; a published or yanked one is 409
   * (yank it instead). Not repeated after a lost answer: a second try would meet 404.
   */
  async delete(id: string): Promise<Release> {
    return this.http.request({ method: 'DELETE', path: this.path(id), idempotent: false });
  }

  /**
   * Stores a file of the release (`PUT …/artifacts/{filename}`), replacing one of the same name, and
   * answers it with the size and SHA-256 the server computed. Bytes and Blobs are retried like any
   * idempotent request; a stream is sent as it is read, never whole in memory, and so never retried.
   */
  async uploadArtifact(
    id: string,
    filename: string,
    body: UploadBody,
    options: ArtifactUploadOptions,
  ): Promise<Artifact> {
    objectArg(options, 'upload options');
    const platform = optionalString(options.platform, 'platform');
    const arch = optionalString(options.arch, 'arch');
    if (platform === undefined || arch === undefined)
      throw new TypeError('uploadArtifact needs the platform and arch the file runs on');
    const signature = optionalString(options.signature, 'signature');
    if (signature !== undefined && !/^[\x20-\x7e]+$/.test(signature))
      throw new TypeError('signature must be printable ASCII text (it travels as a header): encode it, e.g. base64');
    return this.http.request({
      method: 'PUT',
      path: this.artifactPath(id, filename),
      query: { platform, arch },
      upload: { ...prepareUpload(body, 'the file'), contentType: 'application/octet-stream' },
      ...(signature !== undefined ? { headers: { 'x-artifact-signature': signature } } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: milliseconds(options.timeoutMs) } : {}),
      idempotent: true,
    });
  }

  /**
   * A link that downloads the file for 5 minutes, with no credential: the Location of the 303 that
   * `GET …/artifacts/{filename}` answers (the redirect is not followed; nothing is downloaded here).
   * Needs a fetch that shows redirects (Node, Electron's main process), not a browser page's.
   */
  async downloadUrl(id: string, filename: string): Promise<string> {
    return this.http.location({ method: 'GET', path: this.artifactPath(id, filename), idempotent: true });
  }

  private path(id: string): string {
    return `/api/v1/releases/${segment(id, 'release id')}`;
  }

  private artifactPath(id: string, filename: string): string {
    return `${this.path(id)}/artifacts/${fileSegment(filename, 'filename')}`;
  }
}

function milliseconds(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new TypeError(`timeoutMs must be a positive number of milliseconds, got ${describe(value)}`);
  return value;
}
