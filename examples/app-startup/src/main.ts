// The example app's entry point: take a licence seat, show the features, run
// until SIGINT/SIGTERM, then release the seat. No API key ships in the app:
// the customer's licence key is the only credential.
//   LICENSING_URL=https://licensing.example.com LICENSE_KEY=XXXXX-… PUBLIC_KEYS=public-keys.json \
//   PRODUCT_ID=prod_… APP_VERSION=1.4.2 node dist/main.js
// With PRODUCT_ID and APP_VERSION it also asks the product's update feed for a newer version.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  LicensedApp,
  LicensingError,
  type NextAction,
  type PublicKeyInput,
  type ReleaseChannel,
} from '@licensing/client';
import { startLicensed, type GateResult } from './license-gate';
import { DiskLicenseFileStore } from './license-file-store';
import { updateNotice } from './update-check';

type Env = Record<string, string | undefined>;

/** A started (or refused) app: its exit code, and stop() to release the seat when the app ends. */
export interface Started {
  exitCode: number;
  result?: GateResult;
  /** Stops heartbeating and releases the seat; safe to call more than once. */
  stop(): Promise<void>;
}

/** What the user is told to do for each next_action of a refusal. */
const ADVICE: Record<NextAction, string> = {
  none: '',
  activate: 'Start the app again to take a seat.',
  renew: 'Renew your licence.',
  contact_vendor: 'Contact the vendor about your licence.',
  free_a_seat: 'Every seat of your licence is taken: free one of your other machines in the customer portal.',
  update_payment: "Your subscription's last payment failed: update your card.",
  update_key: 'Your licence key was replaced: enter the new key the vendor sent you.',
};

/** Starts with settings from `env`: exit code 0 means run, 1 refused, 2 misconfigured. */
export async function main(env: Env, print: (line: string) => void = console.log): Promise<Started> {
  const nothing = async () => undefined;
  const missing = ['LICENSING_URL', 'LICENSE_KEY'].filter((name) => !env[name]);
  if (missing.length) {
    print(`set ${missing.join(', ')} (see examples/app-startup/README.md)`);
    return { exitCode: 2, stop: nothing };
  }
  const app = new LicensedApp({
    baseUrl: env.LICENSING_URL!,
    licenseKey: env.LICENSE_KEY!,
    fingerprint: env.MACHINE_FINGERPRINT ?? machineFingerprint(),
    name: hostname().slice(0, 100),
    productId: env.PRODUCT_ID,
    publicKeys: env.PUBLIC_KEYS ? await readPublicKeys(env.PUBLIC_KEYS) : [],
    // A user waits for the start: short attempts, one retry.
    timeoutMs: 5_000,
    maxRetries: 1,
    onError: (err) => print(`Licence heartbeat failed (the seat is kept for a while): ${err.message}`),
  });
  const result = await startLicensed({
    app,
    store: new DiskLicenseFileStore(env.LICENSE_FILE ?? join(tmpdir(), 'app-startup-license-file.json')),
    required: (env.REQUIRED_FEATURES ?? '')
      .split(',')
      .map((code) => code.trim())
      .filter(Boolean),
  });
  const stop = () => app.stop();
  if (!result.allowed) {
    const advice = result.nextAction ? ADVICE[result.nextAction] : '';
    print(`Licence refused (${result.code}, from ${result.source}): ${result.detail}${advice ? ` ${advice}` : ''}`);
    if (result.nextAction === 'free_a_seat') print(await seatRescue(app));
    await stop().catch(() => undefined);
    return { exitCode: 1, result, stop: nothing };
  }
  print(`Licence OK (from ${result.source}): ${result.detail}.`);
  print(`Features: ${result.entitlements.length ? result.entitlements.join(', ') : 'none beyond the base app'}.`);
  // Offline (started from the licence file) there is no feed to ask.
  if (env.APP_VERSION && env.PRODUCT_ID && result.source === 'server')
    print(
      await updateNotice(app, {
        version: env.APP_VERSION,
        ...(env.UPDATE_CHANNEL ? { channel: env.UPDATE_CHANNEL as ReleaseChannel } : {}),
      }),
    );
  return { exitCode: 0, result, stop };
}

/**
 * Every seat is taken: the licence's owner is e-mailed a one-time link to the customer portal, on this
 * licence's machines, where they free one; the next start then takes the seat. What to tell the user.
 */
async function seatRescue(app: LicensedApp): Promise<string> {
  try {
    await app.requestSeatRescue();
    return "We e-mailed the licence's owner a link to free a seat; start the app again once one is freed.";
  } catch (err) {
    if (err instanceof LicensingError && err.code === 'rate_limited')
      return 'A link to free a seat was e-mailed within the last hour: use that one.';
    return `No link to free a seat could be sent (${err instanceof Error ? err.message : String(err)}).`;
  }
}

/** The product's public keys as GET /products/{id}/signing-keys answered them ({data: [...]}) or just the array. */
async function readPublicKeys(path: string): Promise<PublicKeyInput[]> {
  const raw = JSON.parse(await readFile(path, 'utf8')) as PublicKeyInput[] | { data: PublicKeyInput[] };
  return Array.isArray(raw) ? raw : raw.data;
}

/** A stable id of this machine that reveals nothing about it. */
function machineFingerprint(): string {
  return createHash('sha256').update(hostname()).digest('hex').slice(0, 32);
}

if (require.main === module) {
  main(process.env).then(
    (started) => {
      if (started.exitCode !== 0) process.exit(started.exitCode);
      // The app's own work keeps the process alive (the heartbeat timer never does).
      const work = setInterval(() => undefined, 60_000);
      const exit = (signal: string) => {
        console.log(`${signal}: releasing the licence seat.`);
        clearInterval(work);
        started.stop().then(
          () => process.exit(0),
          (err: unknown) => {
            // Unreleased, a floating seat lapses by itself at the end of its lease.
            console.error('could not release the seat:', err);
            process.exit(0);
          },
        );
      };
      process.once('SIGINT', () => exit('SIGINT'));
      process.once('SIGTERM', () => exit('SIGTERM'));
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
