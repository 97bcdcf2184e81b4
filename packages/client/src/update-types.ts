// The update feed's answer, written by hand: the OpenAPI document (so generated/openapi.ts) does not
// describe GET /api/v1/products/{id}/updates yet. Once it does, these become names of the generated
// schemas in types.ts, as every other wire type is.
import type { ArtifactArch, ArtifactPlatform, Release } from './types';

/** The file of an update that fits the machine that asked. */
export interface UpdateArtifact {
  filename: string;
  platform: ArtifactPlatform;
  arch: ArtifactArch;
  /**
   * The absolute URL of `GET /api/v1/releases/{id}/artifacts/{filename}`: asked with the licence
   * credential, it redirects (303) to a link that works for 5 minutes (LicensedApp.downloadUrl()).
   */
  url: string;
  size: number;
  /** Hex SHA-256 of the file: check what you downloaded against it before installing. */
  sha256: string;
  /** The signature the vendor uploaded with the file (X-Artifact-Signature), or null. */
  signature: string | null;
}

/** A newer release the licence may have, and its file for this machine. */
export interface UpdateAvailable {
  update_available: true;
  release: Release;
  artifact: UpdateArtifact;
}

/** Nothing newer on the channels asked for that fits this machine and that the licence may have. */
export interface NoUpdate {
  update_available: false;
}

/** The update feed's answer: narrow it on `update_available`. */
export type UpdateCheck = UpdateAvailable | NoUpdate;
