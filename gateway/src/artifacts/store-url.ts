import { join } from 'node:path';
import type { ArtifactStore } from './artifact-store';
import { FileArtifactStore } from './file-store';
import { type S3Location, S3ArtifactStore } from './s3-store';

// ARTIFACT_STORE_URL, the one setting that says where release files live. Credentials are never part
// of it: the SDK's default chain finds them (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, the file
// AWS_SHARED_CREDENTIALS_FILE names, or the role of the machine or pod), so the URL can be logged and
// shown, and a key is rotated without touching it.

const ACCEPTED =
  'empty (files under DATA_DIR/artifacts) or s3://<bucket>[?endpoint=http(s)://host:port][&region=<region>][&force_path_style=true|false]';
const PARAMETERS = new Set(['endpoint', 'region', 'force_path_style']);
/** S3's rule for new bucket names: 3 to 63 lowercase letters, digits, dots and hyphens, a letter or digit at each end. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const REGION = /^[a-z0-9-]{1,32}$/;

/** Why ARTIFACT_STORE_URL cannot be used; the message names the setting and the forms it takes, never the value's secrets. */
function refused(why: string): Error {
  return new Error(`ARTIFACT_STORE_URL ${why}: it must be ${ACCEPTED}`);
}

/** The store ARTIFACT_STORE_URL names: a folder under `dataDir` when empty, else an S3 bucket. */
export function artifactStoreOf(url: string, dataDir: string): ArtifactStore {
  if (url.trim() === '') return new FileArtifactStore(join(dataDir, 'artifacts'));
  return new S3ArtifactStore(s3LocationOf(url));
}

/** The bucket, region, endpoint and addressing an s3:// ARTIFACT_STORE_URL names (an Error naming the setting otherwise). */
export function s3LocationOf(raw: string): S3Location {
  const url = parsed(raw.trim());
  if (url.username || url.password)
    throw refused(
      'holds credentials: give them as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_SHARED_CREDENTIALS_FILE) instead',
    );
  const bucket = url.hostname;
  if (url.port) throw refused('has a port after the bucket (the store\'s address goes in "endpoint=")');
  if (!BUCKET.test(bucket)) throw refused(`names the bucket "${bucket}", which is not a valid S3 bucket name`);
  if (url.pathname !== '' && url.pathname !== '/') throw refused('has a path after the bucket');
  if (url.hash) throw refused('has a #fragment');
  for (const name of url.searchParams.keys())
    if (!PARAMETERS.has(name)) throw refused(`has the unknown parameter "${name}"`);
  const endpoint = endpointOf(url.searchParams.get('endpoint'));
  const region = url.searchParams.get('region') ?? 'us-east-1';
  if (!REGION.test(region)) throw refused(`names the region "${region}", which is not a region name`);
  return { bucket, region, forcePathStyle: pathStyleOf(url.searchParams.get('force_path_style'), endpoint), endpoint };
}

function parsed(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refused('is not a URL');
  }
  if (url.protocol !== 's3:') throw refused(`uses ${url.protocol}//, which is not a store the gateway knows`);
  return url;
}

/** endpoint=: an http(s) origin, nothing more (the bucket goes in the URL's host, credentials nowhere). */
function endpointOf(given: string | null): string | undefined {
  if (given === null) return undefined;
  let endpoint: URL;
  try {
    endpoint = new URL(given);
  } catch {
    throw refused('has an endpoint that is not a URL');
  }
  if (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:')
    throw refused('has an endpoint that is not http(s)');
  if (endpoint.username || endpoint.password)
    throw refused('has credentials in its endpoint: give them as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY instead');
  if ((endpoint.pathname !== '/' && endpoint.pathname !== '') || endpoint.search || endpoint.hash)
    throw refused('has an endpoint with a path or query (only http(s)://host:port)');
  return endpoint.origin;
}

/** Path-style addressing by default where an endpoint is given (most S3-compatible stores need it), virtual-host on AWS. */
function pathStyleOf(given: string | null, endpoint: string | undefined): boolean {
  if (given === null) return endpoint !== undefined;
  if (given === 'true') return true;
  if (given === 'false') return false;
  throw refused(`has force_path_style=${given}, which is neither true nor false`);
}
