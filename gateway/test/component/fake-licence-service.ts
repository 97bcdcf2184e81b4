import {
  Activation,
  generateLicenseKey,
  isFloating,
  lapsed,
  leaseFrom,
  License,
  parseLicenseKey,
  policyToContract,
  refusal,
  withPolicyDefaults,
  BATCH_MAX_ITEMS,
  type DomainEvent,
  type EventData,
  type LicenseAction,
  LicenseBatch,
  type LicenseData,
  type LicenseServiceService,
  type Product,
  type StoredStatus,
  type ValidateLicenseRequest,
  type ValidateLicenseResponse,
} from '@licensing/proto';
import { AppError, checkEmail, type Clock, isId, newEvent, newId, systemClock } from '@licensing/runtime';
import type { FakeHandlers } from '@licensing/test-support';
import { judgedValidation } from './fake-service-answers';

// A licence service for the gateway's route and cache tests: licences held in the test's array, each
// call answered as the licence service answers it (proto/rules' lifecycle table and verdicts, its
// refusals in its words, not_found for another account's licence), on the test's clock. What the real
// service decides is tested on it: services/license/test/component. The events it would publish are
// made by `licenceEvent`, for a test to publish on the stack's stream (gateway-with-fake-services.ts).

export interface FakeLicenceService {
  licences: License[];
  handlers: FakeHandlers<typeof LicenseServiceService>;
  /** The event the licence service publishes for this licence as it is now (replaced keys among previous_keys). */
  licenceEvent<T extends keyof EventData & `license.${string}`>(
    type: T,
    licence: License,
    extra?: Omit<EventData[T], 'license'>,
  ): DomainEvent;
}

interface Retired {
  licenceId: string;
  until: Date;
}

type Handlers = FakeHandlers<typeof LicenseServiceService>;

/** What the fake licence service holds, as the service's store does, and what every handler group reads. */
interface State {
  products: Product[];
  clock: Clock;
  licences: License[];
  machines: Map<string, Activation[]>;
  /** Keys a reroll replaced. */
  retired: Map<string, Retired>;
  /** Idempotency-Keys (account + key) of issued licences and batches: what was asked, and the answer. */
  keyed: Map<string, { asked: string; id: string }>;
  batches: LicenseBatch[];
}

const seats = (s: State, l: License) => s.machines.get(l.id) ?? [];
const answered = (s: State, l: License) => ({ ...l, activations: seats(s, l).length });

/** The caller's licence by its key (not_found for another account's, as the service answers). */
function own(s: State, account_id: string, key: string): License {
  const parsed = parseLicenseKey(key);
  const found = parsed.ok && s.licences.find((l) => l.key === parsed.key && l.account_id === account_id);
  if (!found) throw AppError.notFound('licence');
  return found;
}

/**
 * An Idempotency-Key is the account's: the same request answers what the first made (its id), another
 * request is refused; undefined when the key is new (or none was given).
 */
function keyedAnswer(s: State, account: string, key: string, asked: string): string | undefined {
  const before = key ? s.keyed.get(`${account} ${key}`) : undefined;
  if (before && before.asked !== asked)
    throw new AppError('idempotency_key_reused', 'this Idempotency-Key was already used with a different request');
  return before?.id;
}

/** The product of the caller's account a licence is issued under (its id checked first, as the service does). */
function productOf(s: State, account: string, productId: string): Product {
  if (!isId('prod', productId)) throw AppError.invalid('product_id', 'product_id must be a product id (prod_…)');
  const product = s.products.find((p) => p.id === productId && p.account_id === account);
  if (!product) throw AppError.notFound('product');
  return product;
}

/** A new active licence under the product's policy (its entitlements and the item's extras, sorted). */
function issue(s: State, product: Product, email: string, extra: Partial<License> = {}): License {
  const policy = withPolicyDefaults(product.policy);
  const now = s.clock.now();
  const extras = extra.extra_entitlements ?? [];
  const licence = License.fromPartial({
    id: newId('lic'),
    account_id: product.account_id,
    product_id: product.id,
    key: generateLicenseKey(),
    customer_email: email,
    status: 'active',
    created_at: now.toISOString(),
    expires_at:
      policy.duration_days === null ? '' : new Date(now.getTime() + policy.duration_days * 86_400_000).toISOString(),
    policy: product.policy ?? policyToContract(policy),
    entitlements: [...new Set([...policy.entitlements, ...extras])].sort(),
    ...extra,
  });
  s.licences.push(licence);
  return licence;
}

const page = <T>(data: T[]) => ({ data, page: { has_more: false, next_cursor: '' } });

/** A page of `all` (newest first) after the cursor (an id), as the service pages. */
function pageOf<T extends { id: string }>(all: T[], req?: { limit: number; starting_after: string }) {
  const from = req?.starting_after ? all.findIndex((x) => x.id === req.starting_after) + 1 : 0;
  const limit = req?.limit || 100;
  const data = all.slice(from, from + limit);
  const has_more = from + limit < all.length;
  return { data, page: { has_more, next_cursor: has_more ? data.at(-1)!.id : '' } };
}

/** The licence a key names in the caller's account (its own key, or one a reroll replaced, until when). */
function lookUp(s: State, req: ValidateLicenseRequest) {
  const parsed = parseLicenseKey(req.key);
  if (!parsed.ok) return { parsed };
  const mine = s.licences.find((l) => l.key === parsed.key && l.account_id === req.account_id);
  if (mine) return { parsed, mine, held: seats(s, mine) };
  const old = s.retired.get(parsed.key);
  const byOld = old && s.licences.find((l) => l.id === old.licenceId && l.account_id === req.account_id);
  return byOld ? { parsed, mine: { ...byOld, key: parsed.key }, held: seats(s, byOld), until: old.until } : { parsed };
}

/** A validation judged by proto/rules as the service judges it, with the facts a gateway caches. */
const validate = (s: State, req: ValidateLicenseRequest): ValidateLicenseResponse =>
  judgedValidation(req, lookUp(s, req), s.clock.now());

function validationHandlers(s: State): Handlers {
  return {
    validateLicense: (req) => validate(s, req),
    validateLicenses: ({ validations }) => ({ results: validations.map((v) => validate(s, v)) }),
    recordValidations: () => ({}),
    resolveLicenseKey: ({ key }) => {
      const found = s.licences.find((l) => l.key === key);
      return found
        ? {
            found: true,
            account_id: found.account_id,
            license_id: found.id,
            product_id: found.product_id,
            stored_status: found.status,
          }
        : { found: false, account_id: '', license_id: '', product_id: '', stored_status: '' };
    },
  };
}

function issuingHandlers(s: State): Handlers {
  return {
    createLicense: (req) => {
      const asked = JSON.stringify([req.product_id, req.customer_email, req.send_email]);
      const before = keyedAnswer(s, req.account_id, req.idempotency_key, asked);
      if (before) return answered(s, s.licences.find((l) => l.id === before)!);
      const product = productOf(s, req.account_id, req.product_id);
      const licence = issue(s, product, checkEmail('customer_email', req.customer_email));
      if (req.idempotency_key) s.keyed.set(`${req.account_id} ${req.idempotency_key}`, { asked, id: licence.id });
      return answered(s, licence);
    },
    getLicense: ({ account_id, key }) => answered(s, own(s, account_id, key)),
    listLicenses: ({ account_id, product_id, status, page: asked }) => {
      if (product_id && !isId('prod', product_id))
        throw AppError.invalid('product_id', 'product_id must be a product id (prod_…)');
      const mine = s.licences
        .filter((l) => l.account_id === account_id && (!product_id || l.product_id === product_id))
        .filter((l) => !status || l.status === status);
      return pageOf(mine.map((l) => answered(s, l)).reverse(), asked);
    },
    updateLicense: ({ account_id, key, customer_email, metadata }) => {
      const l = own(s, account_id, key);
      if (customer_email === undefined && Object.keys(metadata).length === 0)
        throw new AppError('invalid_request', 'nothing to change: give customer_email, metadata and/or entitlements');
      if (customer_email !== undefined) l.customer_email = checkEmail('customer_email', customer_email);
      for (const [k, v] of Object.entries(metadata)) {
        if (v === '') delete l.metadata[k];
        else l.metadata[k] = v;
      }
      return answered(s, l);
    },
  };
}

function changeHandlers(s: State): Handlers {
  return {
    transitionLicense: ({ account_id, key, action }) => {
      const l = own(s, account_id, key);
      const state = { status: l.status as StoredStatus, expires_at: l.expires_at ? new Date(l.expires_at) : null };
      const why = refusal(state, action as LicenseAction, withPolicyDefaults(l.policy));
      if (why) throw new AppError('conflict', why);
      l.status = action === 'suspend' ? 'suspended' : action === 'revoke' ? 'revoked' : 'active';
      return answered(s, l);
    },
    rerollLicense: ({ account_id, key, grace_hours }) => {
      if (!Number.isInteger(grace_hours) || grace_hours < 0 || grace_hours > 720)
        throw AppError.invalid('grace_hours', 'grace_hours must be a whole number from 0 to 720');
      const parsed = parseLicenseKey(key);
      const old = parsed.ok ? s.retired.get(parsed.key) : undefined;
      const replaced = old && s.licences.find((l) => l.id === old.licenceId && l.account_id === account_id);
      if (replaced) return answered(s, replaced); // a retry: the licence as it is now
      const l = own(s, account_id, key);
      if (l.status === 'revoked') throw new AppError('conflict', 'a revoked licence cannot be rerolled');
      const until = new Date(s.clock.now().getTime() + grace_hours * 3_600_000);
      s.retired.set(l.key, { licenceId: l.id, until });
      l.key = generateLicenseKey();
      return answered(s, l);
    },
    deleteLicense: ({ account_id, key }) => {
      const l = own(s, account_id, key);
      if (l.subscription?.id && l.subscription.status !== 'canceled')
        throw new AppError(
          'conflict',
          `the licence is billed by subscription ${l.subscription.id} (${l.subscription.status}): cancel it before deleting the licence`,
        );
      s.licences.splice(s.licences.indexOf(l), 1);
      s.machines.delete(l.id);
      return l;
    },
  };
}

function activate(s: State, l: License, fingerprint: string, name: string) {
  if (l.status !== 'active') throw new AppError('conflict', `the licence is ${l.status}: it cannot be activated`);
  const policy = withPolicyDefaults(l.policy);
  const now = s.clock.now();
  const lease = isFloating(policy) ? leaseFrom(now, policy.lease_seconds!).toISOString() : '';
  const again = seats(s, l).find((a) => a.fingerprint === fingerprint);
  if (again) {
    again.lease_expires_at = lease; // a re-activation renews the lease
    return { activation: again, created: false };
  }
  // A lapsed floating seat no longer holds its slot: it is reclaimed when the licence is full.
  const holding = seats(s, l).filter((a) => !lapsed(Date.parse(a.lease_expires_at) || null, now.getTime()));
  const max = policy.max_activations;
  if (max !== null && holding.length >= max)
    throw AppError.refusedAs(
      'conflict',
      'activation_limit_reached',
      `activation_limit_reached: the licence is already active on ${max} machines; deactivate one first`,
    );
  const activation = Activation.fromPartial({
    id: newId('act'),
    license_id: l.id,
    fingerprint,
    name,
    created_at: now.toISOString(),
    lease_expires_at: lease,
  });
  const kept = max !== null && seats(s, l).length >= max ? holding : seats(s, l);
  s.machines.set(l.id, [...kept, activation]);
  return { activation, created: true };
}

function seatHandlers(s: State): Handlers {
  return {
    activate: ({ account_id, key, fingerprint, name }) => activate(s, own(s, account_id, key), fingerprint, name),
    heartbeat: ({ account_id, key, activation_id }) => {
      const l = own(s, account_id, key);
      const seat = seats(s, l).find((a) => a.id === activation_id);
      if (!seat) throw AppError.notFound('activation');
      const policy = withPolicyDefaults(l.policy);
      if (!isFloating(policy))
        throw new AppError(
          'conflict',
          "the licence's policy has no lease (lease_seconds is null): its activations are node-locked and need no heartbeat",
        );
      const now = s.clock.now();
      if (lapsed(Date.parse(seat.lease_expires_at), now.getTime()))
        throw new AppError('conflict', `lease_expired: the seat lapsed at ${seat.lease_expires_at}; activate again`);
      seat.lease_expires_at = leaseFrom(now, policy.lease_seconds!).toISOString();
      return seat;
    },
    listActivations: ({ account_id, key }) => page(seats(s, own(s, account_id, key))),
    deactivate: ({ account_id, key, activation_id }) => {
      const l = own(s, account_id, key);
      const gone = seats(s, l).find((a) => a.id === activation_id);
      if (!gone) throw AppError.notFound('activation');
      s.machines.set(
        l.id,
        seats(s, l).filter((a) => a !== gone),
      );
      return gone;
    },
  };
}

/**
 * Batches: every item checked first (naming it) and nothing stored on a refusal; the stored batch is
 * answered "running", and its items are issued at once (the real service's job does it moments later),
 * so the next GetLicenseBatch answers it done.
 */
function batchHandlers(s: State): Handlers {
  return {
    createLicenseBatch: (req) => {
      const asked = JSON.stringify([req.product_id, req.licenses]);
      const before = keyedAnswer(s, req.account_id, req.idempotency_key, asked);
      if (before) return s.batches.find((b) => b.id === before)!;
      if (req.licenses.length < 1 || req.licenses.length > BATCH_MAX_ITEMS)
        throw AppError.invalid('licenses', `licenses must hold 1 to ${BATCH_MAX_ITEMS} items`);
      for (const [i, item] of req.licenses.entries()) checkEmail(`licenses[${i}].customer_email`, item.customer_email);
      const product = productOf(s, req.account_id, req.product_id);
      const results = req.licenses.map((item, index) => {
        const licence = issue(s, product, item.customer_email, {
          metadata: item.metadata,
          extra_entitlements: item.entitlements,
        });
        const { customer_email, send_email } = item;
        return {
          index,
          status: 'issued',
          license_id: licence.id,
          key: licence.key,
          error: '',
          customer_email,
          send_email,
        };
      });
      const now = s.clock.now().toISOString();
      const common = { id: newId('lbat'), account_id: req.account_id, product_id: req.product_id, created_at: now };
      const total = results.length;
      s.batches.push(
        LicenseBatch.fromPartial({ ...common, status: 'done', total, issued: total, results, completed_at: now }),
      );
      if (req.idempotency_key) s.keyed.set(`${req.account_id} ${req.idempotency_key}`, { asked, id: common.id });
      return LicenseBatch.fromPartial({
        ...common,
        status: 'running',
        total,
        results: results.map((r) => ({ ...r, status: 'waiting', key: '' })),
      });
    },
    getLicenseBatch: ({ account_id, id }) => {
      const found = s.batches.find((b) => b.id === id && b.account_id === account_id);
      if (!found) throw AppError.notFound('batch');
      return found;
    },
  };
}

function licenceData(s: State, l: License): LicenseData {
  const previous = [...s.retired].filter(([, r]) => r.licenceId === l.id && r.until > s.clock.now());
  return {
    id: l.id,
    key: l.key,
    product_id: l.product_id,
    customer_email: l.customer_email,
    status: l.status as LicenseData['status'],
    expires_at: l.expires_at || null,
    created_at: l.created_at,
    entitlements: l.entitlements,
    ...(previous.length
      ? { previous_keys: previous.map(([k, r]) => ({ key: k, valid_until: r.until.toISOString() })) }
      : {}),
  };
}

/** `products`: the product service's, whose policy a licence is issued under (not_found for another account's). */
export function fakeLicenceService(products: Product[], clock: Clock = systemClock): FakeLicenceService {
  const s: State = {
    products,
    clock,
    licences: [],
    machines: new Map(),
    retired: new Map(),
    keyed: new Map(),
    batches: [],
  };
  return {
    licences: s.licences,
    handlers: {
      ...validationHandlers(s),
      ...issuingHandlers(s),
      ...changeHandlers(s),
      ...seatHandlers(s),
      ...batchHandlers(s),
    },
    licenceEvent: (type, licence, extra) =>
      newEvent(type, licence.account_id, { ...extra, license: licenceData(s, licence) } as never, clock.now()),
  };
}
