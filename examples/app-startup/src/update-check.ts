// The update check at start-up, once the licence lets the app run: does the product's update feed
// offer a newer version for this machine? What it found is one line for the user. A failed check
// never stops the app (it runs the version it has); a refusal says what the user can do.
import {
  type ArtifactArch,
  type ArtifactPlatform,
  type LicensedApp,
  LicensingError,
  type ReleaseChannel,
} from '@licensing/client';

/** Node's names of the machines there are builds for, in the feed's words. */
const PLATFORMS: Partial<Record<string, ArtifactPlatform>> = { darwin: 'macos', win32: 'windows', linux: 'linux' };
const ARCHS: Partial<Record<string, ArtifactArch>> = { x64: 'x86_64', arm64: 'aarch64' };

export interface UpdateCheckSettings {
  /** The version running now. */
  version: string;
  /** The least stable channel the user accepts (default stable). */
  channel?: ReleaseChannel;
  /** Node's process.platform and process.arch (given by tests). */
  platform?: string;
  arch?: string;
}

/** What the feed said, as one line; never throws. */
export async function updateNotice(app: LicensedApp, settings: UpdateCheckSettings): Promise<string> {
  const platform = PLATFORMS[settings.platform ?? process.platform];
  const arch = ARCHS[settings.arch ?? process.arch];
  if (!platform || !arch)
    return `No update check: there are no builds for ${settings.platform ?? process.platform}/${settings.arch ?? process.arch}.`;
  try {
    const check = await app.checkForUpdate({
      version: settings.version,
      platform,
      arch,
      ...(settings.channel ? { channel: settings.channel } : {}),
    });
    if (!check.update_available) return `Up to date (${settings.version}).`;
    const { release, artifact } = check;
    const notes = release.notes ? ` ${release.notes.split('\n')[0]}` : '';
    return `Update available: ${release.version} (${release.channel}), ${artifact.filename}, ${artifact.size} bytes.${notes}`;
  } catch (err) {
    // 403: the licence may have no updates (an expired one under the restrict strategy): say why and what to do.
    if (err instanceof LicensingError && err.status === 403) {
      const advice = err.nextAction === 'renew' ? ' Renew your licence to get them.' : '';
      return `No updates for this licence (${err.validationCode ?? err.code}): ${err.detail.replace(/\.?$/, '.')}${advice}`;
    }
    return `Update check failed (the app runs as it is): ${err instanceof Error ? err.message : String(err)}`;
  }
}
