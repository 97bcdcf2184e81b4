// A scripted licensing API of one licence for unit tests of the app-side SDK
// (LicensedApp) and the example app: a fake fetch that keeps seats in a Map
// the way the API's contract describes them (idempotent activation per
// fingerprint, at most max_activations seats, heartbeats that renew a lease,
// 404 for a seat that is gone), validation with entitlements, and licence
// files signed with a real Ed25519 key. Pure logic only: no network.
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import type { Activation } from '@licensing/client';

export const KEY = '7K3QF-9XW2M-T0RBH-PZ4DN-C8E1V-Q3ATG';
export const BASE = 'https://licensing.example.test';

export interface Sent {
  method: string;
  path: string;
  authorization: string | undefined;
  body: Record<string, unknown> | undefined;
}

const problem = (status: number, code: string, detail: string) =>
  new Response(
    JSON.stringify({ type: `/docs#error-${code}`, title: code, status, code, detail, request_id: 'req_1' }),
    {
      status,
      headers: { 'content-type': 'application/problem+json' },
    },
  );
const answer = (status: number, body?: unknown) =>
  new Response(status === 204 ? null : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json' },
  });

/** The product's signing key: files of the fake server verify with `signingKeys`. */
const signer = generateKeyPairSync('ed25519');
export const signingKeys = [
  { kid: 'key_1', public_key_pem: signer.publicKey.export({ type: 'spki', format: 'pem' }).toString() },
];

export interface FakePolicy {
  lease_seconds: number | null;
  max_activations?: number;
  entitlements?: string[];
}

/** An API of one licence: seats by id, at most `max_activations` (default 1); lapse() takes one away. */
/** A licence file of KEY signed with `privateKey` as the server signs one (kid key_1): `fields` over the defaults. */
export function signedLicenseFile(privateKey: KeyObject, fields: Record<string, unknown>) {
  const payload = Buffer.from(
    JSON.stringify({
      license_key: KEY,
      license_id: 'lic_1',
      product_id: 'prod_1',
      customer_email: null,
      status: 'active',
      expires_at: null,
      fingerprint: null,
      kid: 'key_1',
      ...fields,
    }),
  );
  return {
    kid: 'key_1',
    algorithm: 'Ed25519',
    payload: payload.toString('base64url'),
    signature: sign(null, payload, privateKey).toString('base64url'),
  };
}

export function fakeServer(policy: FakePolicy = { lease_seconds: 60 }) {
  const sent: Sent[] = [];
  const seats = new Map<string, Activation>();
  let next = 1;
  let outage = false;
  const entitlements = policy.entitlements ?? ['pdf-export', 'sso-lite'];
  let suspended = false;
  const lease = () =>
    policy.lease_seconds === null ? null : new Date(Date.now() + policy.lease_seconds * 1000).toISOString();
  const license = {
    id: 'lic_1',
    key: KEY,
    product_id: 'prod_1',
    customer_email: null,
    status: 'active',
    expires_at: null,
    policy: { ...policy, entitlements },
    entitlements,
    activations: 0,
    metadata: {},
    created_at: '2026-01-01T00:00:00Z',
    last_validated_at: null,
  };
  const fetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(String(input));
    const method = init.method ?? 'GET';
    const body = typeof init.body === 'string' ? (JSON.parse(init.body) as Record<string, unknown>) : undefined;
    sent.push({
      method,
      path: url.pathname,
      authorization: (init.headers as Record<string, string>).authorization,
      body,
    });
    if (outage) throw new TypeError('fetch failed');
    const base = `/api/v1/licenses/${KEY}`;
    if (suspended && url.pathname !== '/api/v1/keys/validate')
      return problem(401, 'unauthorized', 'the licence is suspended');
    if (method === 'POST' && url.pathname === `${base}/activations`) {
      const existing = [...seats.values()].find((s) => s.fingerprint === body?.fingerprint);
      if (existing) return answer(200, existing);
      if (seats.size >= (policy.max_activations ?? 1))
        return problem(409, 'conflict', 'activation_limit_reached: the licence is already active on 1 machines');
      const seat = {
        id: `act_${next++}`,
        fingerprint: String(body?.fingerprint),
        name: null,
        created_at: new Date().toISOString(),
        lease_expires_at: lease(),
      };
      seats.set(seat.id, seat);
      return answer(201, seat);
    }
    const beat = new RegExp(`^${base}/activations/(act_\\d+)/heartbeat$`).exec(url.pathname);
    if (method === 'POST' && beat) {
      const seat = seats.get(beat[1]);
      if (!seat) return problem(404, 'not_found', 'activation not found');
      seat.lease_expires_at = lease();
      return answer(200, seat);
    }
    const one = new RegExp(`^${base}/activations/(act_\\d+)$`).exec(url.pathname);
    if (method === 'DELETE' && one) {
      if (!seats.delete(one[1])) return problem(404, 'not_found', 'activation not found');
      return answer(204);
    }
    if (method === 'POST' && url.pathname === '/api/v1/keys/validate') {
      const seated = [...seats.values()].some((s) => s.fingerprint === body?.fingerprint);
      const missing = ((body?.entitlements as string[] | undefined) ?? []).filter((e) => !entitlements.includes(e));
      const verdict = suspended
        ? { valid: false, code: 'suspended', detail: 'the licence is suspended', next_action: 'contact_vendor' }
        : !seated
          ? { valid: false, code: 'not_activated', detail: 'activate this machine', next_action: 'activate' }
          : missing.length
            ? {
                valid: false,
                code: 'entitlements_missing',
                detail: `missing: ${missing}`,
                next_action: 'contact_vendor',
              }
            : { valid: true, code: 'valid', detail: 'the licence is valid', next_action: 'none' };
      return answer(200, {
        ...verdict,
        status: 'active',
        expires_at: null,
        cache_until: new Date(Date.now() + 3_600_000).toISOString(),
        license,
        entitlements,
      });
    }
    if (method === 'POST' && url.pathname === `${base}/file`) {
      return answer(
        201,
        signedLicenseFile(signer.privateKey, {
          fingerprint: body?.fingerprint ?? null,
          issued_at: new Date().toISOString(),
          valid_until: new Date(Date.now() + Number(body?.ttl_days ?? 30) * 86_400_000).toISOString(),
          entitlements,
        }),
      );
    }
    return problem(404, 'not_found', `no route ${method} ${url.pathname}`);
  };
  return {
    fetch: fetch as typeof globalThis.fetch,
    sent,
    seats,
    /** The server reclaims a seat, as it does when its lease lapses. */
    lapse: (id: string) => seats.delete(id),
    /** The vendor suspends the licence. */
    suspend: () => {
      suspended = true;
    },
    /** Every request fails as if the network were down. */
    down: (value: boolean) => {
      outage = value;
    },
    count: (method: string, pattern: RegExp) => sent.filter((s) => s.method === method && pattern.test(s.path)).length,
  };
}
