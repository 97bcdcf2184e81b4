// The start-up decision: may this app run, and with which features? In order:
//   1. online: LicensedApp.start() takes this machine's (floating) seat and
//      validates it; the features the app cannot run without are checked with
//      validate({ entitlements }); a fresh licence file is kept for later;
//   2. when the server cannot be reached (no answer, timeout, 429, 5xx): the
//      kept licence file, verified offline with the product's public keys.
// A definite "no" from the server is final; only an absent answer falls back.
import { LicensingError, type LicensedApp, type NextAction } from '@licensing/client';
import type { LicenseFileStore } from './license-file-store';

export interface GateOptions {
  /** The app's licence session: the licence key and this machine's fingerprint (no API key). */
  app: LicensedApp;
  /** Where the last licence file is kept for starts without network. */
  store: LicenseFileStore;
  /** Features the app cannot run without (entitlement codes); [] to only show what the licence has. */
  required?: readonly string[];
  /** How long a kept licence file lets the app start offline, in days (default 7). */
  offlineDays?: number;
}

export interface GateResult {
  allowed: boolean;
  /** Where the answer came from. */
  source: 'server' | 'license-file' | 'none';
  /** The server's validation code, an error's code, the licence file's failure reason, or `unreachable`. */
  code: string;
  detail: string;
  /** What the app should tell the user to do (the server's next_action), when it said. */
  nextAction: NextAction | null;
  /** The licence's features. */
  entitlements: string[];
}

export async function startLicensed(options: GateOptions): Promise<GateResult> {
  const { app } = options;
  let state: Awaited<ReturnType<LicensedApp['start']>>;
  try {
    state = await app.start();
  } catch (err) {
    if (!(err instanceof LicensingError)) throw err;
    if (noAnswer(err)) return fromLicenseFile(options, err);
    return refusedByServer(app, err);
  }
  let verdict = state.validation;
  if (verdict.valid && options.required?.length) verdict = await app.validate({ entitlements: options.required });
  if (!verdict.valid) {
    // Do not keep a seat the app will not use.
    await app.stop().catch(() => undefined);
    return {
      allowed: false,
      source: 'server',
      code: verdict.code,
      detail: verdict.detail,
      nextAction: verdict.next_action,
      entitlements: state.entitlements,
    };
  }
  // The next start may have no network: keep a fresh signed file. Failing to get one is no reason to refuse.
  try {
    await options.store.write(await app.file({ ttlDays: options.offlineDays ?? 7 }));
  } catch {
    /* the previous file, if any, stays */
  }
  const lease = state.activation.lease_expires_at;
  return {
    allowed: true,
    source: 'server',
    code: verdict.code,
    detail: lease ? `floating seat held until ${lease}, renewed every ${state.heartbeatEveryMs} ms` : verdict.detail,
    nextAction: verdict.next_action,
    entitlements: state.entitlements,
  };
}

/** The server could not give a verdict: unreachable, timed out, overloaded or down. */
const noAnswer = (err: LicensingError) => err.status === 0 || err.status === 429 || err.status >= 500;

/**
 * A definite "no" to taking a seat. 409 `activation_limit_reached: …`: every seat is taken. Otherwise
 * (401: the key is unknown, suspended or revoked; 409: the licence is not active) validation, which
 * answers for any key, names the reason and what to do.
 */
async function refusedByServer(app: LicensedApp, err: LicensingError): Promise<GateResult> {
  const refused = (code: string, detail: string, nextAction: NextAction | null): GateResult => ({
    allowed: false,
    source: 'server',
    code,
    detail,
    nextAction,
    entitlements: [],
  });
  if (err.status === 409 && err.detail.startsWith('activation_limit_reached'))
    return refused(
      'activation_limit_reached',
      'every seat of this licence is in use: close the app on another machine',
      err.nextAction === 'free_a_seat' ? 'free_a_seat' : null,
    );
  const verdict = await app.validate().catch(() => undefined);
  if (verdict && !verdict.valid) return refused(verdict.code, verdict.detail, verdict.next_action);
  return refused(err.code, err.detail, null);
}

async function fromLicenseFile(options: GateOptions, cause: LicensingError): Promise<GateResult> {
  const refused = (source: GateResult['source'], code: string, detail: string): GateResult => ({
    allowed: false,
    source,
    code,
    detail,
    nextAction: null,
    entitlements: [],
  });
  const file = await options.store.read();
  if (file === undefined)
    return refused(
      'none',
      'unreachable',
      `the licence server cannot be reached (${cause.detail}) and there is no licence file`,
    );
  const result = await options.app.verifyOffline(file);
  if (!result.valid || !result.license)
    return refused('license-file', result.reason ?? 'invalid', 'the kept licence file does not verify on this machine');
  const missing = (options.required ?? []).filter((code) => !result.entitlements.includes(code));
  if (missing.length)
    return refused('license-file', 'entitlements_missing', `the licence does not include: ${missing.join(', ')}`);
  return {
    allowed: true,
    source: 'license-file',
    code: 'valid',
    detail: `offline: licence file valid until ${result.license.valid_until}`,
    nextAction: null,
    entitlements: result.entitlements,
  };
}
