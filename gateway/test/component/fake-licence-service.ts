import {
  Activation,
  generateLicenseKey,
  isFloating,
  lapsed,
  leaseFrom,
  seatFacts,
  judge,
  License,
  parseLicenseKey,
  policyToContract,
  refusal,
  seenByScope,
  verdictFields,
  withPolicyDefaults,
  type DomainEvent,
  type EventData,
  type LicenseAction,
  type LicenseData,
  type LicenseServiceService,
  type Product,
  type StoredStatus,
  type ValidateLicenseRequest,
  type ValidateLicenseResponse,
} from '@licensing/proto';
import { AppError, checkEmail, type Clock, isId, newEvent, newId, systemClock } from '@licensing/runtime';
import type { FakeHandlers } from '@licensing/test-support';

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

const page = <T>(data: T[]) => ({ data, page: { has_more: false, next_cursor: '' } });

/** A page of `all` (newest first) after the cursor (an id), as the service pages. */
function pageOf<T extends { id: string }>(all: T[], req?: { limit: number; starting_after: string }) {
  const from = req?.starting_after ? all.findIndex((x) => x.id === req.starting_after) + 1 : 0;
  const limit = req?.limit || 100;
  const data = all.slice(from, from + limit);
  const has_more = from + limit < all.length;
  return { data, page: { has_more, next_cursor: has_more ? data.at(-1)!.id : '' } };
}

/** `products`: the product service's, whose policy a licence is issued under (not_found for another account's). */
export function fakeLicenceService(products: Product[], clock: Clock = systemClock): FakeLicenceService {
  const licences: License[] = [];
  const machines = new Map<string, Activation[]>();
  const retired = new Map<string, Retired>();
  const issuedFor = new Map<string, { asked: string; licence: License }>();
  const seats = (l: License) => machines.get(l.id) ?? [];
  const own = (account_id: string, key: string) => {
    const parsed = parseLicenseKey(key);
    const found = parsed.ok && licences.find((l) => l.key === parsed.key && l.account_id === account_id);
    if (!found) throw AppError.notFound('licence');
    return found;
  };
  const answered = (l: License) => ({ ...l, activations: seats(l).length });

  /** The licence a key names in the caller's account (its own key, or one a reroll replaced). */
  const lookUp = (req: ValidateLicenseRequest) => {
    const parsed = parseLicenseKey(req.key);
    if (!parsed.ok) return { parsed };
    const mine = licences.find((l) => l.key === parsed.key && l.account_id === req.account_id);
    if (mine) return { parsed, mine };
    const old = retired.get(parsed.key);
    const byOld = old && licences.find((l) => l.id === old.licenceId && l.account_id === req.account_id);
    return byOld ? { parsed, mine: { ...byOld, key: parsed.key }, until: old.until } : { parsed };
  };

  const validate = (req: ValidateLicenseRequest): ValidateLicenseResponse => {
    const { parsed, mine, until } = lookUp(req);
    const policy = withPolicyDefaults(mine?.policy);
    const held = mine ? seats(licences.find((l) => l.id === mine.id)!) : [];
    const fingerprints = held.map((a) => a.fingerprint);
    const leases = new Map(
      held.filter((a) => a.lease_expires_at).map((a) => [a.fingerprint, Date.parse(a.lease_expires_at)]),
    );
    const facts = mine && {
      account_id: mine.account_id,
      product_id: mine.product_id,
      status: mine.status as StoredStatus,
      expires_at: mine.expires_at ? new Date(mine.expires_at) : null,
      policy,
      extra_entitlements: mine.extra_entitlements,
      retired_until: until ?? null,
    };
    const request = { accountId: req.account_id, productId: req.product_id, fingerprint: req.fingerprint };
    const active = { has: (f: string) => fingerprints.includes(f), size: fingerprints.length };
    const seatsNow = seatFacts(active, leases, req.fingerprint, clock.now().getTime());
    const verdict = judge(parsed, facts ?? null, request, seatsNow, clock.now());
    return {
      ...verdictFields(verdict),
      license: verdict.visible && mine ? seenByScope(mine, req.key_scope, policy.validate_keys_see_email) : undefined,
      facts:
        req.want_facts && parsed.ok
          ? {
              found: !!mine,
              license: mine,
              stored_status: mine?.status ?? '',
              activation_count: fingerprints.length,
              active_fingerprints: fingerprints,
              cacheable: true,
              remembered_since: '',
              active_lease_expires_at: held.map((a) => a.lease_expires_at),
              retired_until: until?.toISOString() ?? '',
            }
          : undefined,
    };
  };

  const handlers: FakeHandlers<typeof LicenseServiceService> = {
    createLicense: (req) => {
      // An Idempotency-Key is the account's: the same request answers the same licence, another is refused.
      const keyed = req.idempotency_key ? `${req.account_id} ${req.idempotency_key}` : '';
      const asked = JSON.stringify([req.product_id, req.customer_email, req.send_email]);
      const before = keyed ? issuedFor.get(keyed) : undefined;
      if (before && before.asked !== asked)
        throw new AppError('idempotency_key_reused', 'this Idempotency-Key was already used with a different request');
      if (before) return answered(before.licence);
      if (!isId('prod', req.product_id))
        throw AppError.invalid('product_id', 'product_id must be a product id (prod_…)');
      const email = checkEmail('customer_email', req.customer_email);
      const product = products.find((p) => p.id === req.product_id && p.account_id === req.account_id);
      if (!product) throw AppError.notFound('product');
      const days = withPolicyDefaults(product.policy).duration_days;
      const licence = License.fromPartial({
        id: newId('lic'),
        account_id: req.account_id,
        product_id: req.product_id,
        key: generateLicenseKey(),
        customer_email: email,
        status: 'active',
        created_at: clock.now().toISOString(),
        expires_at: days === null ? '' : new Date(clock.now().getTime() + days * 86_400_000).toISOString(),
        policy: product.policy ?? policyToContract(withPolicyDefaults(undefined)),
      });
      licences.push(licence);
      if (keyed) issuedFor.set(keyed, { asked, licence });
      return answered(licence);
    },
    validateLicense: validate,
    validateLicenses: ({ validations }) => ({ results: validations.map(validate) }),
    recordValidations: () => ({}),
    resolveLicenseKey: ({ key }) => {
      const found = licences.find((l) => l.key === key);
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
    getLicense: ({ account_id, key }) => answered(own(account_id, key)),
    listLicenses: ({ account_id, product_id, status, page: asked }) => {
      if (product_id && !isId('prod', product_id))
        throw AppError.invalid('product_id', 'product_id must be a product id (prod_…)');
      const mine = licences
        .filter((l) => l.account_id === account_id && (!product_id || l.product_id === product_id))
        .filter((l) => !status || l.status === status);
      return pageOf(mine.map(answered).reverse(), asked);
    },
    updateLicense: ({ account_id, key, customer_email, metadata }) => {
      const l = own(account_id, key);
      if (customer_email === undefined && Object.keys(metadata).length === 0)
        throw new AppError('invalid_request', 'nothing to change: give customer_email, metadata and/or entitlements');
      if (customer_email !== undefined) l.customer_email = checkEmail('customer_email', customer_email);
      for (const [k, v] of Object.entries(metadata)) {
        if (v === '') delete l.metadata[k];
        else l.metadata[k] = v;
      }
      return answered(l);
    },
    transitionLicense: ({ account_id, key, action }) => {
      const l = own(account_id, key);
      const state = { status: l.status as StoredStatus, expires_at: l.expires_at ? new Date(l.expires_at) : null };
      const why = refusal(state, action as LicenseAction, withPolicyDefaults(l.policy));
      if (why) throw new AppError('conflict', why);
      l.status = action === 'suspend' ? 'suspended' : action === 'revoke' ? 'revoked' : 'active';
      return answered(l);
    },
    rerollLicense: ({ account_id, key, grace_hours }) => {
      if (!Number.isInteger(grace_hours) || grace_hours < 0 || grace_hours > 720)
        throw AppError.invalid('grace_hours', 'grace_hours must be a whole number from 0 to 720');
      const parsed = parseLicenseKey(key);
      const old = parsed.ok ? retired.get(parsed.key) : undefined;
      const replaced = old && licences.find((l) => l.id === old.licenceId && l.account_id === account_id);
      if (replaced) return answered(replaced); // a retry: the licence as it is now
      const l = own(account_id, key);
      if (l.status === 'revoked') throw new AppError('conflict', 'a revoked licence cannot be rerolled');
      retired.set(l.key, { licenceId: l.id, until: new Date(clock.now().getTime() + grace_hours * 3_600_000) });
      l.key = generateLicenseKey();
      return answered(l);
    },
    deleteLicense: ({ account_id, key }) => {
      const l = own(account_id, key);
      if (l.subscription?.id && l.subscription.status !== 'canceled')
        throw new AppError(
          'conflict',
          `the licence is billed by subscription ${l.subscription.id} (${l.subscription.status}): cancel it before deleting the licence`,
        );
      licences.splice(licences.indexOf(l), 1);
      machines.delete(l.id);
      return l;
    },
    activate: ({ account_id, key, fingerprint, name }) => {
      const l = own(account_id, key);
      if (l.status !== 'active') throw new AppError('conflict', `the licence is ${l.status}: it cannot be activated`);
      const policy = withPolicyDefaults(l.policy);
      const now = clock.now();
      const lease = isFloating(policy) ? leaseFrom(now, policy.lease_seconds!).toISOString() : '';
      const again = seats(l).find((a) => a.fingerprint === fingerprint);
      if (again) {
        again.lease_expires_at = lease; // a re-activation renews the lease
        return { activation: again, created: false };
      }
      // A lapsed floating seat no longer holds its slot: it is reclaimed when the licence is full.
      const holding = seats(l).filter((a) => !lapsed(Date.parse(a.lease_expires_at) || null, now.getTime()));
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
      const kept = max !== null && seats(l).length >= max ? holding : seats(l);
      machines.set(l.id, [...kept, activation]);
      return { activation, created: true };
    },
    heartbeat: ({ account_id, key, activation_id }) => {
      const l = own(account_id, key);
      const seat = seats(l).find((a) => a.id === activation_id);
      if (!seat) throw AppError.notFound('activation');
      const policy = withPolicyDefaults(l.policy);
      if (!isFloating(policy))
        throw new AppError(
          'conflict',
          "the licence's policy has no lease (lease_seconds is null): its activations are node-locked and need no heartbeat",
        );
      const now = clock.now();
      if (lapsed(Date.parse(seat.lease_expires_at), now.getTime()))
        throw new AppError('conflict', `lease_expired: the seat lapsed at ${seat.lease_expires_at}; activate again`);
      seat.lease_expires_at = leaseFrom(now, policy.lease_seconds!).toISOString();
      return seat;
    },
    listActivations: ({ account_id, key }) => page(seats(own(account_id, key))),
    deactivate: ({ account_id, key, activation_id }) => {
      const l = own(account_id, key);
      const gone = seats(l).find((a) => a.id === activation_id);
      if (!gone) throw AppError.notFound('activation');
      machines.set(
        l.id,
        seats(l).filter((a) => a !== gone),
      );
      return gone;
    },
  };

  const licenceData = (l: License): LicenseData => {
    const previous = [...retired].filter(([, r]) => r.licenceId === l.id && r.until > clock.now());
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
  };

  return {
    licences,
    handlers,
    licenceEvent: (type, licence, extra) =>
      newEvent(type, licence.account_id, { ...extra, license: licenceData(licence) } as never, clock.now()),
  };
}
