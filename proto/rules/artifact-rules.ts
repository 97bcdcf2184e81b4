import { artifactArchs, artifactPlatforms, isOneOf } from './vocabulary';

// The rules of a release's files, declared once for the gateway (which stores them and hands them out)
// and the product service (which records them): names, limits and what fits a machine.

/** A file name's most bytes (UTF-8), as most file systems allow. */
export const ARTIFACT_FILENAME_MAX_BYTES = 255;
/** Files one release may hold (409 for one more): a release's record carries them all. */
export const ARTIFACTS_PER_RELEASE_MAX = 50;
/** The default of ARTIFACT_MAX_BYTES: the largest file an upload may carry (2 GiB). */
export const DEFAULT_ARTIFACT_MAX_BYTES = 2 * 1024 ** 3;
/** How long a download link works once handed out. */
export const DOWNLOAD_LINK_TTL_SECONDS = 300;
/** X-Artifact-Signature's longest value (an EdDSA or minisign signature is far shorter). */
export const ARTIFACT_SIGNATURE_MAX_LENGTH = 4096;

/**
 * What is wrong with a file name, or null: it must be one name (no path separator, not "." or "..",
 * no ".." inside), printable (no control character), and at most 255 bytes.
 */
export function artifactFilenameProblem(name: string): string | null {
  if (!name) return 'the filename is empty';
  if (Buffer.byteLength(name, 'utf8') > ARTIFACT_FILENAME_MAX_BYTES)
    return `the filename must be at most ${ARTIFACT_FILENAME_MAX_BYTES} bytes`;
  if (name.includes('/') || name.includes('\\')) return 'the filename must not contain a path separator (/ or \\)';
  if (name === '.' || name.includes('..')) return 'the filename must not be "." or contain ".."';
  if (hasControlCharacter(name)) return 'the filename must not contain control characters';
  return null;
}

/** What is wrong with an artifact's platform or arch, or null. */
export function artifactTargetProblem(platform: string, arch: string): { field: string; message: string } | null {
  if (!isOneOf(artifactPlatforms, platform))
    return { field: 'platform', message: `platform must be one of ${artifactPlatforms.join(', ')}` };
  if (!isOneOf(artifactArchs, arch))
    return { field: 'arch', message: `arch must be one of ${artifactArchs.join(', ')}` };
  return null;
}

/** Whether a file for `platform`/`arch` runs on a machine asking for `wantPlatform`/`wantArch`. */
export function artifactFits(
  artifact: { platform: string; arch: string },
  wantPlatform: string,
  wantArch: string,
): boolean {
  const platformFits = !wantPlatform || artifact.platform === 'any' || artifact.platform === wantPlatform;
  const archFits = !wantArch || artifact.arch === 'any' || artifact.arch === 'universal' || artifact.arch === wantArch;
  return platformFits && archFits;
}

/** C0 and C1 controls, and DEL. */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}
