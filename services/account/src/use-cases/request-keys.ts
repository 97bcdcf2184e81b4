import { randomBytes } from 'node:crypto';
import { AppError, IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_SECONDS, type Clock } from '@licensing/runtime';
import type {
  ClaimRequestKeyRequest,
  ClaimRequestKeyResponse,
  RequestKeyRun,
  SettleRequestKeyRequest,
} from '@licensing/proto';
import type { RequestKeyDoc, RequestKeyStore } from '../store/request-keys';

// The Idempotency-Key of the gateway's POSTs that create or send something, one mechanism for all of
// them (docs/api.md, "Idempotency"), with the rules of the runtime's idempotent(): the first request
// with a key runs and its answer is kept 24 hours; the same key with the same request answers it again;
// with another request, 422; while the first still runs, 409. A failed request (4xx or 5xx) frees its
// key. A run holds its key by a lease it renews, so a gateway that died mid-request frees it in seconds.

export interface RequestKeyDeps {
  keys: RequestKeyStore;
  clock: Clock;
  /** IDEMPOTENCY_LEASE_MS unless a test wants it shorter. */
  leaseMs?: number;
}

const KEY = /^[\x21-\x7e]{1,255}$/;
const HASH = /^[0-9a-f]{64}$/;

function idOf(accountId: string, key: string): string {
  if (!accountId) throw AppError.invalid('account_id', 'account_id is required');
  if (!KEY.test(key))
    throw AppError.invalid('Idempotency-Key', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
  return `${accountId}:${key}`;
}

const reused = () =>
  new AppError('idempotency_key_reused', 'this Idempotency-Key was already used with a different request');
const inProgress = () =>
  new AppError('conflict', 'a request with this Idempotency-Key is already in progress; retry later');

export async function claimRequestKey(
  deps: RequestKeyDeps,
  req: ClaimRequestKeyRequest,
): Promise<ClaimRequestKeyResponse> {
  const _id = idOf(req.account_id, req.key);
  if (!HASH.test(req.request_hash)) throw AppError.invalid('request_hash', 'request_hash must be a sha256 in hex');
  const leaseMs = deps.leaseMs ?? IDEMPOTENCY_LEASE_MS;
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = deps.clock.now();
    const run = randomBytes(12).toString('base64url');
    const claim: RequestKeyDoc = {
      _id,
      request_hash: req.request_hash,
      state: 'running',
      run,
      lease_until: new Date(now.getTime() + leaseMs),
      created_at: now,
    };
    if (await deps.keys.insert(claim)) return { replay: false, run, status: 0, body_json: '', location: '' };
    const found = await deps.keys.find(_id);
    if (!found) continue; // removed meanwhile: claim afresh
    const expired = found.created_at.getTime() <= now.getTime() - IDEMPOTENCY_TTL_SECONDS * 1000;
    const lapsed = found.state === 'running' && found.lease_until.getTime() <= now.getTime();
    if (expired || lapsed) {
      // Older than 24 hours, or its run stopped renewing (its gateway died): gone, and the unique insert
      // of the next claim decides between the requests that saw it so.
      await deps.keys.remove(found);
      continue;
    }
    if (found.request_hash !== req.request_hash) throw reused();
    if (found.state === 'running') throw inProgress();
    return {
      replay: true,
      run: '',
      status: found.status ?? 200,
      body_json: found.body_json ?? '',
      location: found.location ?? '',
    };
  }
  throw inProgress();
}

export async function renewRequestKey(deps: RequestKeyDeps, req: RequestKeyRun): Promise<void> {
  const until = new Date(deps.clock.now().getTime() + (deps.leaseMs ?? IDEMPOTENCY_LEASE_MS));
  await deps.keys.updateRunning(idOf(req.account_id, req.key), req.run, { lease_until: until });
}

/** Keeps the run's answer (done), or frees the key (failed). Only the run holding the key settles it. */
export async function settleRequestKey(deps: RequestKeyDeps, req: SettleRequestKeyRequest): Promise<void> {
  const _id = idOf(req.account_id, req.key);
  if (!req.succeeded) {
    await deps.keys.remove({ _id, run: req.run, state: 'running' });
    return;
  }
  if (req.body_json.length > 1_000_000) throw AppError.invalid('body_json', 'an answer is at most 1 MB');
  await deps.keys.updateRunning(_id, req.run, {
    state: 'done',
    status: req.status,
    body_json: req.body_json,
    location: req.location,
  });
}
