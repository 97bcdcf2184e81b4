import { describe, objectArg, optionalString, segment } from '../arguments';
import type { Transport } from '../http';
import type { ArtifactArch, ArtifactPlatform, ReleaseChannel } from '../types';
import type { UpdateCheck } from '../update-types';

export interface UpdateCheckOptions {
  /** The version running now (Semantic Versioning): only newer releases are offered. */
  version: string;
  /** This machine's platform: macos, windows or linux. */
  platform: ArtifactPlatform;
  /** This machine's architecture: x86_64 or aarch64. */
  arch: ArtifactArch;
  /** The least stable channel the user accepts (default stable); every more stable one is offered too. */
  channel?: ReleaseChannel;
}

/** The update feed, asked with the licence credential: what an app calls through LicensedApp. */
export class Updates {
  constructor(private readonly http: Transport) {}

  /** `GET /api/v1/products/{id}/updates`: the newest release the licence may have, if newer than `version`. */
  async check(productId: string, options: UpdateCheckOptions): Promise<UpdateCheck> {
    objectArg(options, 'update check options');
    const query = {
      version: required(options.version, 'version'),
      platform: required(options.platform, 'platform'),
      arch: required(options.arch, 'arch'),
      channel: optionalString(options.channel, 'channel'),
    };
    return this.http.request({
      method: 'GET',
      path: `/api/v1/products/${segment(productId, 'product id')}/updates`,
      query,
      idempotent: true,
    });
  }

  /**
   * The 5-minute link behind an artifact's `url` (the Location of its 303), asked with the licence
   * credential, which goes to the base URL's server only: a `url` elsewhere is refused unsent.
   */
  async downloadUrl(artifact: { url: string }): Promise<string> {
    objectArg(artifact, 'artifact');
    const url = required(artifact.url, 'artifact.url');
    const path = this.http.pathBelowBase(url);
    if (path === null)
      throw new TypeError(`artifact.url must be on the licensing server the app talks to (baseUrl), got "${url}"`);
    return this.http.location({ method: 'GET', path, idempotent: true });
  }
}

function required(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new TypeError(`${name} must be a non-empty string, got ${describe(value)}`);
  return value.trim();
}
