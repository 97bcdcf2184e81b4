import type { Request, RequestHandler, Router } from 'express';
import {
  licenseActions,
  seenByScope,
  type ActivateResponse,
  type Activation,
  type License,
  type LicenseOverrides,
  licenseFileJson,
  type NextAction,
} from '@licensing/proto';
import { AppError } from '@licensing/runtime';
import { sendProblem } from '../http/errors';
import { checkOwnLicense } from '../auth/app-routes';
import { principalOf } from '../auth/principal';
import type { Clients } from '../backends/clients';
import type { LicenseValidator } from '../license-validation/validator';
import { trialEndOf, validationJson } from '../license-validation/validation-json';
import { checkId, idempotencyKey, pageShape, readBody, toPage, pageJson } from '../request-shapes/shapes';
import { policyJson } from './products';
import {
  activationCreate,
  KEY_MAX,
  keyValidationRequest,
  licenseCreate,
  licenseFileRequest,
  licenseList,
  licenseUpdate,
  licenseValidateQuery,
  deactivationQuery,
} from '../request-shapes/operations';
import { registerRouteTable, withBody, withQuery, type RouteRow } from './route';

/** REST shape of a licence. customer_email is null for validate keys unless the product allows them to see it. */
export const licenseJson = (l: License) => ({
  id: l.id,
  key: l.key,
  product_id: l.product_id,
  customer_email: l.customer_email || null,
  status: l.status,
  expires_at: l.expires_at || null,
  policy: policyJson(l.policy),
  overrides: overridesJson(l.overrides),
  activations: l.activations,
  metadata: l.metadata,
  entitlements: l.entitlements,
  extra_entitlements: l.extra_entitlements,
  created_at: l.created_at,
  last_validated_at: l.last_validated_at || null,
  subscription: l.subscription?.id
    ? {
        id: l.subscription.id,
        status: l.subscription.status,
        trial_end: l.subscription.trial_end || null,
        paid_through: l.subscription.paid_through || null,
        grace_until: l.subscription.grace_until || null,
      }
    : null,
});

/** A licence's own terms, only those it has: `{"max_activations": 5}`, `{}` when none (null: unlimited, node-locked, perpetual). */
export const overridesJson = (o: LicenseOverrides | undefined) => ({
  ...(o?.expires_at !== undefined ? { expires_at: o.expires_at || null } : {}),
  ...(o?.max_activations ? { max_activations: o.max_activations.value ?? null } : {}),
  ...(o?.lease_seconds ? { lease_seconds: o.lease_seconds.value ?? null } : {}),
});

/** The licence's own terms a body sends, as the contract carries them (undefined: none asked). */
function termsOf(body: {
  expires_at?: string | null;
  max_activations?: number | null;
  lease_seconds?: number | null;
}): LicenseOverrides | undefined {
  const { expires_at, max_activations, lease_seconds } = body;
  if (expires_at === undefined && max_activations === undefined && lease_seconds === undefined) return undefined;
  // The contract's empty expiry means perpetual: an empty string sent is no time.
  if (expires_at === '') throw AppError.invalid('expires_at', 'expires_at must be an ISO 8601 time, or null');
  const nullable = (v: number | null | undefined) => (v === undefined ? undefined : { value: v ?? undefined });
  return {
    expires_at: expires_at === undefined ? undefined : (expires_at ?? ''),
    max_activations: nullable(max_activations),
    lease_seconds: nullable(lease_seconds),
  };
}

export const activationJson = (a: Activation) => ({
  id: a.id,
  fingerprint: a.fingerprint,
  name: a.name || null,
  created_at: a.created_at,
  lease_expires_at: a.lease_expires_at || null,
});

/** What the licence handlers reach: the services, and the validator that hears of every change this gateway makes. */
interface LicenseDeps {
  clients: Clients;
  validator: LicenseValidator;
}

const keyOf = (req: Request) => String(req.params.key).slice(0, KEY_MAX + 1);

function listLicenses({ clients }: LicenseDeps): RequestHandler {
  return withQuery(licenseList, async (_req, res, query) => {
    const page = toPage(query, 'lic');
    const productId = query.product_id ? checkId('product_id', 'prod', query.product_id) : '';
    const out = await clients.licenses.listLicenses({
      account_id: principalOf(res).accountId,
      page,
      product_id: productId,
      customer_email: query.customer_email ?? '',
      status: query.status ?? '',
    });
    res.json(pageJson(out.page!, out.data.map(licenseJson)));
  });
}

function createLicense({ clients, validator }: LicenseDeps): RequestHandler {
  return withBody(licenseCreate, async (req, res, body) => {
    const license = await clients.licenses.createLicense({
      account_id: principalOf(res).accountId,
      product_id: body.product_id!,
      customer_email: body.customer_email!,
      idempotency_key: idempotencyKey(req),
      // Asked on license.created, in the licence's own write: the notification service's durable
      // consumer queues the mail, so neither a crash after this call nor that service being down loses
      // it. A retry with the same Idempotency-Key answers the same licence and writes no second event.
      send_email: body.send_email === true,
      overrides: termsOf(body),
    });
    validator.changed(principalOf(res), license.key); // a "not found" this gateway remembers for the key is wrong now
    res
      .status(201)
      .location(`/api/v1/licenses/${license.key}`)
      .json({ success: true, license_key: license.key, license: licenseJson(license) });
  });
}

function validateLicenseByQuery({ validator }: LicenseDeps): RequestHandler {
  return withQuery(licenseValidateQuery, async (_req, res, { license_key, fingerprint }) => {
    checkOwnLicense(principalOf(res), license_key); // a licence validates itself only (scope.ts checked it too)
    const out = await validator.validate(principalOf(res), {
      key: license_key!,
      productId: '',
      fingerprint: fingerprint ?? '',
    });
    res.locals.validationCode = out.code; // not_found, revoked: app budgets (rate-limits/middleware.ts)
    res.json(validationJson(out));
  });
}

function validateKey({ validator }: LicenseDeps): RequestHandler {
  return withBody(keyValidationRequest, async (_req, res, body) => {
    checkOwnLicense(principalOf(res), body.key); // a licence validates itself only
    const productId = body.product_id ? checkId('product_id', 'prod', body.product_id) : '';
    const out = await validator.validate(principalOf(res), {
      key: body.key!,
      productId,
      fingerprint: body.fingerprint ?? '',
      entitlements: body.entitlements ?? [],
    });
    res.locals.validationCode = out.code; // not_found, revoked: app budgets (rate-limits/middleware.ts)
    res.json({
      valid: out.valid,
      code: out.code,
      detail: out.detail,
      status: out.license?.status ?? null,
      expires_at: out.license?.expires_at || null,
      entitlements: out.license?.entitlements ?? [],
      next_action: out.next_action,
      cache_until: out.cache_until,
      trial_end: trialEndOf(out),
      license: out.license ? licenseJson(out.license) : null,
    });
  });
}

function getLicense({ clients }: LicenseDeps): RequestHandler {
  return async (req, res) => {
    const p = principalOf(res);
    const license = await clients.licenses.getLicense({ account_id: p.accountId, key: keyOf(req) });
    // An app credential never sees the vendor's metadata, and the e-mail only where the policy allows it.
    res.json(licenseJson(seenByScope(license, p.scope, !!license.policy?.validate_keys_see_email)));
  };
}

/** An empty metadata value removes that entry; entitlements (the licence's extras) are replaced whole. */
function updateLicense({ clients, validator }: LicenseDeps): RequestHandler {
  return withBody(licenseUpdate, async (req, res, body) => {
    const license = await clients.licenses.updateLicense({
      account_id: principalOf(res).accountId,
      key: keyOf(req),
      customer_email: body.customer_email,
      metadata: body.metadata ?? {},
      set_entitlements: body.entitlements !== undefined,
      entitlements: body.entitlements ?? [],
      overrides: termsOf(body),
      deactivate_excess: body.deactivate_excess === true,
    });
    validator.changed(principalOf(res), license.key);
    res.json(licenseJson(license));
  });
}

/** The licence and its activations go (409 while a subscription bills it); license.deleted follows. */
function deleteLicense({ clients, validator }: LicenseDeps): RequestHandler {
  return async (req, res) => {
    readBody(req, {});
    const license = await clients.licenses.deleteLicense({ account_id: principalOf(res).accountId, key: keyOf(req) });
    validator.changed(principalOf(res), license.key);
    res.status(204).end();
  };
}

/** POST /licenses/:key/<action>: suspend, reinstate, revoke, … (licenseActions). */
function transitionLicense(action: (typeof licenseActions)[number]) {
  return ({ clients, validator }: LicenseDeps): RequestHandler =>
    async (req, res) => {
      readBody(req, {});
      const license = await clients.licenses.transitionLicense({
        account_id: principalOf(res).accountId,
        key: keyOf(req),
        action,
      });
      // Read your writes: this gateway's next validation already sees the change (the others within a second, by event).
      validator.changed(principalOf(res), license.key);
      res.json(licenseJson(license));
    };
}

function listActivations({ clients }: LicenseDeps): RequestHandler {
  return withQuery(pageShape, async (req, res, query) => {
    const page = toPage(query, 'act');
    const out = await clients.licenses.listActivations({
      account_id: principalOf(res).accountId,
      key: keyOf(req),
      page,
    });
    res.json(pageJson(out.page!, out.data.map(activationJson)));
  });
}

function activate({ clients, validator }: LicenseDeps): RequestHandler {
  return withBody(activationCreate, async (req, res, body) => {
    let out: ActivateResponse;
    try {
      out = await clients.licenses.activate({
        account_id: principalOf(res).accountId,
        key: keyOf(req),
        fingerprint: body.fingerprint!,
        name: body.name ?? '',
      });
    } catch (err) {
      // Every seat taken: the app can offer seat rescue (POST …/seat-rescue), as a validation would.
      if (err instanceof AppError && err.validationCode === 'activation_limit_reached')
        return sendProblem(res, err, { next_action: 'free_a_seat' satisfies NextAction });
      throw err;
    }
    validator.changed(principalOf(res), keyOf(req));
    res.status(out.created ? 201 : 200).json(activationJson(out.activation!));
  });
}

function issueLicenseFile({ clients }: LicenseDeps): RequestHandler {
  return withBody(licenseFileRequest, async (req, res, body) => {
    const file = await clients.licenses.issueLicenseFile({
      account_id: principalOf(res).accountId,
      key: keyOf(req),
      fingerprint: body.fingerprint ?? '',
      ttl_days: body.ttl_days ?? 0,
      // App credentials: no e-mail unless the policy shows it, and files of at most max_file_ttl_days.
      key_scope: principalOf(res).scope,
    });
    res.status(201).json(licenseFileJson(file));
  });
}

function deactivate({ clients, validator }: LicenseDeps): RequestHandler {
  return withQuery(deactivationQuery, async (req, res, { fingerprint }) => {
    await clients.licenses.deactivate({
      account_id: principalOf(res).accountId,
      key: keyOf(req),
      activation_id: String(req.params.id).slice(0, 64),
      // App credentials free machines within customer_deactivations_per_30_days, but their own floating seat.
      key_scope: principalOf(res).scope,
      fingerprint: fingerprint ?? '',
    });
    validator.changed(principalOf(res), keyOf(req));
    res.status(204).end();
  });
}

/**
 * No eviction of the validation cache: a heartbeat only extends a lease, and a cached copy that says
 * the seat lapsed is never used to answer (license-validation/validator.ts).
 */
function heartbeat({ clients }: LicenseDeps): RequestHandler {
  return async (req, res) => {
    const activation = await clients.licenses.heartbeat({
      account_id: principalOf(res).accountId,
      key: keyOf(req),
      activation_id: String(req.params.id).slice(0, 64),
    });
    res.json(activationJson(activation));
  };
}

/** Licences, their validation, lifecycle actions, activations and files. */
export const licenseRouteTable: readonly RouteRow<LicenseDeps>[] = [
  { method: 'get', path: '/licenses', role: 'read_only', handler: listLicenses },
  { method: 'post', path: '/licenses', role: 'developer', handler: createLicense },
  // Listed before /licenses/:key so "validate" is not taken for a key.
  { method: 'get', path: '/licenses/validate', role: 'read_only', handler: validateLicenseByQuery },
  { method: 'post', path: '/keys/validate', role: 'read_only', handler: validateKey },
  { method: 'get', path: '/licenses/:key', role: 'read_only', handler: getLicense },
  { method: 'patch', path: '/licenses/:key', role: 'developer', handler: updateLicense },
  { method: 'delete', path: '/licenses/:key', role: 'developer', handler: deleteLicense },
  ...licenseActions.map((action) => ({
    method: 'post' as const,
    path: `/licenses/:key/${action}`,
    // Support suspends, reinstates and renews; a revocation is final, and a developer's.
    role: action === 'revoke' ? ('developer' as const) : ('support' as const),
    handler: transitionLicense(action),
  })),
  { method: 'get', path: '/licenses/:key/activations', role: 'read_only', handler: listActivations },
  { method: 'post', path: '/licenses/:key/activations', role: 'developer', handler: activate },
  { method: 'post', path: '/licenses/:key/file', role: 'developer', handler: issueLicenseFile },
  { method: 'delete', path: '/licenses/:key/activations/:id', role: 'support', handler: deactivate },
  { method: 'post', path: '/licenses/:key/activations/:id/heartbeat', role: 'developer', handler: heartbeat },
];

export function licenseRoutes(router: Router, clients: Clients, validator: LicenseValidator): void {
  registerRouteTable(router, licenseRouteTable, { clients, validator });
}
