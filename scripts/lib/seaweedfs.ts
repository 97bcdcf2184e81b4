import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './net';
import { repoRoot } from './paths';
import { untilListening } from './tool-process';

// SeaweedFS (Apache-2.0) is the S3-compatible store the tests run the gateway's S3 artifact store
// against: one `weed mini` process holds a master, a volume server, a filer and the S3 gateway.
// It is built once with Go from the module proxy, cached next to FerretDB in ~/.cache/licensing.
// `go install …@version` refuses it (its go.mod has a replace directive), so it is built as the
// dependency of the pinned module in scripts/seaweedfs, which repeats that replace.
export const SEAWEEDFS_VERSION = 'v0.0.0-20261109003541-7506e5f91cd6';

const cacheDir = join(
  process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'),
  'licensing',
  `seaweedfs-${SEAWEEDFS_VERSION}`,
);
const cachedBinary = join(cacheDir, 'weed');

/** Written while a background build runs (its pid), and when one failed (what Go said). */
const buildingMarker = join(cacheDir, 'building.pid');
const failedMarker = join(cacheDir, 'build-failed.txt');
const BUILD_HINT = 'about 12 minutes on 2 CPUs';

function checkGo(): void {
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
  } catch {
    throw new Error(
      'SeaweedFS is needed by the S3 artifact store tests and Go is not installed to build it: install Go >= 1.26.6.',
    );
  }
}

/** A folder of one build's own, renamed into place once whole: two builds at once never leave each other half a binary. */
function buildFolder(): { work: string; args: string[]; env: NodeJS.ProcessEnv } {
  mkdirSync(cacheDir, { recursive: true });
  const work = mkdtempSync(join(cacheDir, 'build-'));
  for (const f of ['go.mod', 'go.sum', 'tools.go'])
    copyFileSync(join(repoRoot(), 'scripts', 'seaweedfs', f), join(work, f));
  // An older Go fails with its own message; GOTOOLCHAIN=go1.27.3 (say) lets it fetch a newer one.
  const env = { ...process.env, GOTOOLCHAIN: process.env.GOTOOLCHAIN ?? 'local' };
  return {
    work,
    args: ['build', '-ldflags=-s -w', '-o', join(work, 'weed'), 'github.com/seaweedfs/seaweedfs/weed'],
    env,
  };
}

/** The binary, built here and now when it is missing and no background build is running. */
export function seaweedfsBinary(log: (line: string) => void = console.log): string {
  if (existsSync(cachedBinary)) return cachedBinary;
  checkGo();
  log(`Building SeaweedFS ${SEAWEEDFS_VERSION} with Go (first run only; ${BUILD_HINT})...`);
  const started = Date.now();
  const { work, args, env } = buildFolder();
  try {
    execFileSync('go', args, { cwd: work, env, stdio: ['ignore', 'ignore', 'inherit'] });
    renameSync(join(work, 'weed'), cachedBinary);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  log(`SeaweedFS built at ${cachedBinary} in ${Math.round((Date.now() - started) / 1000)} s`);
  return cachedBinary;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Whether a background build (of this or another run) is under way. */
function building(): boolean {
  if (!existsSync(buildingMarker)) return false;
  return alive(Number(readFileSync(buildingMarker, 'utf8')));
}

/**
 * Starts building SeaweedFS in the background when it is missing (the test set-up calls it first, so
 * the build overlaps every test that does not need it; those that do wait in seaweedfsReady(), and
 * the sequencer runs them last). Returns at once. The calling process must outlive the build (jest's
 * main process does).
 */
export function buildSeaweedfsInBackground(log: (line: string) => void = console.log): void {
  if (existsSync(cachedBinary) || building()) return;
  checkGo();
  log(`Building SeaweedFS ${SEAWEEDFS_VERSION} with Go in the background (first run only; ${BUILD_HINT})...`);
  const started = Date.now();
  const { work, args, env } = buildFolder();
  rmSync(failedMarker, { force: true });
  const child = spawn('go', args, { cwd: work, env, stdio: ['ignore', 'ignore', 'pipe'] });
  writeFileSync(buildingMarker, String(child.pid));
  let said = '';
  child.stderr!.on('data', (chunk: Buffer) => (said = (said + chunk.toString()).slice(-4000)));
  const finish = (code: number | null) => {
    if (code === 0 && existsSync(join(work, 'weed'))) {
      renameSync(join(work, 'weed'), cachedBinary);
      log(`SeaweedFS built at ${cachedBinary} in ${Math.round((Date.now() - started) / 1000)} s`);
    } else writeFileSync(failedMarker, `go build exited ${code}: ${said}`);
    rmSync(buildingMarker, { force: true });
    rmSync(work, { recursive: true, force: true });
  };
  child.once('exit', finish);
  child.once('error', (err) => writeFileSync(failedMarker, String(err)));
}

/**
 * The binary once it is there: waits for a background build (polling, up to `timeoutMs`), fails with
 * what Go said if it failed, and builds it here when nothing is building it.
 */
/** How long a test waits for a background build at most: its beforeAll's timeout too. */
export const SEAWEEDFS_WAIT_MS = 30 * 60_000;

export async function seaweedfsReady(timeoutMs = SEAWEEDFS_WAIT_MS): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (existsSync(cachedBinary)) return cachedBinary;
    if (existsSync(failedMarker)) throw new Error(`SeaweedFS did not build: ${readFileSync(failedMarker, 'utf8')}`);
    if (!building()) return seaweedfsBinary();
    if (Date.now() > deadline) throw new Error(`SeaweedFS was still building after ${timeoutMs / 60_000} minutes`);
    await new Promise((r) => setTimeout(r, 2000));
  }
}

export interface S3Server {
  /** ARTIFACT_STORE_URL for this server: s3://<bucket>?endpoint=http://127.0.0.1:<port>&region=us-east-1 */
  url: string;
  /** http://127.0.0.1:<port>, the S3 endpoint. */
  endpoint: string;
  bucket: string;
  region: string;
  /** The one identity the server accepts (made up for this server), as AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY. */
  accessKeyId: string;
  secretAccessKey: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

const REGION = 'us-east-1';
/**
 * Every port SeaweedFS listens on, each given a free one: the gRPC ports too, which default to the
 * HTTP ones + 10000 (possibly taken, or in the kernel's ephemeral range).
 */
const SERVER_PORTS = [
  'master.port',
  'master.port.grpc',
  'volume.port',
  'volume.port.grpc',
  'filer.port',
  'filer.port.grpc',
  's3.port',
  's3.port.grpc',
  'admin.port',
  'admin.port.grpc',
];

/**
 * Starts SeaweedFS on loopback with its data and logs under `dataDir`, every port a free one, and
 * resolves once the S3 port answers a signed ListBuckets. `bucket` (default "artifacts") is only named in the URL: the
 * store under test creates it (ready()).
 */
export async function startS3Server(opts: {
  dataDir: string;
  bucket?: string;
  log?: (line: string) => void;
}): Promise<S3Server> {
  const bin = await seaweedfsReady();
  const bucket = opts.bucket ?? 'artifacts';
  const accessKeyId = `AKIA${randomBytes(8).toString('hex').toUpperCase()}`;
  const secretAccessKey = randomBytes(24).toString('base64url');
  mkdirSync(join(opts.dataDir, 'logs'), { recursive: true });
  const identities = join(opts.dataDir, 's3-identities.json');
  writeFileSync(
    identities,
    JSON.stringify({
      identities: [
        {
          name: 'tests',
          credentials: [{ accessKey: accessKeyId, secretKey: secretAccessKey }],
          actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
        },
      ],
    }),
    { mode: 0o600 },
  );
  const ports: Record<string, number> = {};
  for (const name of SERVER_PORTS) ports[name] = await freePort();
  const child = spawn(bin, weedArgs(opts.dataDir, identities, ports), {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  const stop = await untilListening(child, 'SeaweedFS', ports['s3.port']);
  const endpoint = `http://127.0.0.1:${ports['s3.port']}`;
  try {
    await untilS3Answers(endpoint, accessKeyId, secretAccessKey);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url: `s3://${bucket}?endpoint=${endpoint}&region=${REGION}`,
    endpoint,
    bucket,
    region: REGION,
    accessKeyId,
    secretAccessKey,
    process: child,
    stop,
  };
}

function weedArgs(dataDir: string, identities: string, ports: Record<string, number>): string[] {
  const port = (name: string) => `-${name}=${ports[name]}`;
  return [
    // glog's files go with the data, not to /tmp.
    `-logdir=${join(dataDir, 'logs')}`,
    // mini rather than server: it starts the S3 gateway once its filer has joined the master, where
    // server's first write waits about ten seconds for the filer's lock ring.
    'mini',
    `-dir=${dataDir}`,
    '-ip=127.0.0.1',
    '-ip.bind=127.0.0.1',
    ...SERVER_PORTS.map(port),
    `-s3.config=${identities}`,
    '-webdav=false',
    '-admin.ui=false',
    // A test server reports nothing anywhere.
    '-master.telemetry=false',
    // Fixed ports a second run would find taken: its Iceberg and Lance catalogs, the admin's old port.
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
    '-admin.port.legacy=0',
  ];
}

/** Polls a signed ListBuckets until it is answered 200: the S3 port listens before its filer is ready. */
async function untilS3Answers(endpoint: string, accessKeyId: string, secretAccessKey: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  let last = '';
  while (Date.now() < deadline) {
    const headers = signedHeaders(new URL(endpoint).host, accessKeyId, secretAccessKey, new Date());
    const answer = await fetch(`${endpoint}/`, { headers }).then(
      async (r) => (r.ok ? null : `${r.status} ${(await r.text()).slice(0, 200)}`),
      (err: unknown) => String(err),
    );
    if (answer === null) return;
    last = answer;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`SeaweedFS's S3 port at ${endpoint} did not answer a signed ListBuckets within 30 s: ${last}`);
}

/** AWS Signature Version 4 for GET / with no body (ListBuckets): no SDK needed by this script. */
function signedHeaders(host: string, accessKeyId: string, secret: string, now: Date): Record<string, string> {
  const amzDate = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const payload = createHash('sha256').update('').digest('hex');
  const signed = 'host;x-amz-content-sha256;x-amz-date';
  const canonical = [
    'GET',
    '/',
    '',
    `host:${host}`,
    `x-amz-content-sha256:${payload}`,
    `x-amz-date:${amzDate}`,
    '',
    signed,
    payload,
  ].join('\n');
  const scope = `${day}/${REGION}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
  const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), REGION), 's3'), 'aws4_request');
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  return {
    'x-amz-content-sha256': payload,
    'x-amz-date': amzDate,
    authorization: `AWS4-HMAC-SHA256 Credential=${accessKeyId}/${scope}, SignedHeaders=${signed}, Signature=${signature}`,
  };
}
