import { missingEntitlements } from './entitlements';
import type { ParsedKey } from './license-key';
import { effectiveStatus, inGrace, nextStatusChange, validUntil, type LicenseState } from './status';
import type { NextAction, ValidationCode } from './vocabulary';

/** How long a client may trust a positive answer offline, at most. */
export const MAX_OFFLINE_MS = 24 * 3600_000;

/**
 * cache_until counts from the start of the current second: an answer is then the same for the whole
 * second (until a status changes within it), so the gateway can serve a licence's answer, as
 * serialised, for the rest of the second instead of judging and serialising it again each time.
 */
const secondOf = (now: Date) => now.getTime() - (now.getTime() % 1000);

export interface LicenseFacts extends LicenseState {
  account_id: string;
  product_id: string;
  /** The licence's own entitlements on top of its policy's (missing on licences stored before: none). */
  extra_entitlements?: readonly string[];
  /**
   * Set when the key asked is one the licence had before a reroll: it validates (next_action
   * update_key) until this moment, and is not found from then on. Absent or null: the current key.
   */
  retired_until?: Date | null;
}

export interface ActivationFacts {
  /** The fingerprint given is activated on this licence. */
  fingerprintActive: boolean;
  /** Active machines on this licence (floating seats only while their lease runs). */
  count: number;
  /** The fingerprint's floating seat lapsed (not yet reclaimed): lease.ts. */
  leaseExpired?: boolean;
  /** When the fingerprint's floating seat lapses (epoch ms), null when it has none: a positive answer lasts no longer. */
  leaseEndsAt?: number | null;
}

export interface Verdict {
  valid: boolean;
  code: ValidationCode;
  detail: string;
  nextAction: NextAction;
  /** Until when the client may rely on this answer without asking again. */
  cacheUntil: Date;
  /** Whether the caller may see the licence (it exists in the caller's account). */
  visible: boolean;
}

const no = (code: ValidationCode, detail: string, nextAction: NextAction, now: Date, visible = true): Verdict => ({
  valid: false,
  code,
  detail,
  nextAction,
  cacheUntil: new Date(secondOf(now)),
  visible,
});

/**
 * The validation rules in the order they are checked (docs/api.md keeps the
 * same table): shape and checksum, the caller's account, product, revoked,
 * suspended, expired, lease expired (the fingerprint's floating seat lapsed), activation, entitlements,
 * grace, valid.
 */
export function judge(
  parsed: ParsedKey,
  license: LicenseFacts | null,
  request: { accountId: string; productId: string; fingerprint: string; entitlements?: readonly string[] },
  activation: ActivationFacts,
  now: Date,
): Verdict {
  const retiredUntil = license?.retired_until?.getTime();
  if (retiredUntil === undefined || !parsed.ok || license!.account_id !== request.accountId)
    return judgeKey(parsed, license, request, activation, now);
  // A key replaced by a reroll: not found once its grace is over, else judged as the licence is, and
  // a positive answer tells the app to take its new key (and lasts no longer than the grace).
  if (retiredUntil <= now.getTime()) return no('not_found', 'no licence with this key', 'contact_vendor', now, false);
  const verdict = judgeKey(parsed, license, request, activation, now);
  if (!verdict.valid) return verdict;
  return {
    ...verdict,
    detail: `${verdict.detail}; this key was replaced by a new one and stops working at ${new Date(retiredUntil).toISOString()}`,
    nextAction: 'update_key',
    cacheUntil: new Date(Math.min(verdict.cacheUntil.getTime(), retiredUntil)),
  };
}

/**
 * The next moment after `now` at which time alone changes the verdict on these facts: the licence's
 * expiry or end of grace (nextStatusChange), or the end of a replaced key's grace.
 */
export function nextVerdictChange(license: LicenseFacts, now: Date): number {
  const status = nextStatusChange(license, now);
  const retired = license.retired_until?.getTime();
  return retired !== undefined && retired > now.getTime() ? Math.min(status, retired) : status;
}

function judgeKey(
  parsed: ParsedKey,
  license: LicenseFacts | null,
  /** entitlements: the codes the app needs (none: not checked). */
  request: { accountId: string; productId: string; fingerprint: string; entitlements?: readonly string[] },
  activation: ActivationFacts,
  now: Date,
): Verdict {
  if (!parsed.ok) {
    return no(
      'not_found',
      parsed.reason === 'checksum'
        ? 'the licence key has a typo: its check characters do not match'
        : 'this is not a licence key',
      'contact_vendor',
      now,
      false,
    );
  }
  // Another account's licence is indistinguishable from no licence.
  if (!license || license.account_id !== request.accountId)
    return no('not_found', 'no licence with this key', 'contact_vendor', now, false);
  if (request.productId && license.product_id !== request.productId)
    return no('product_mismatch', 'the licence belongs to another product', 'contact_vendor', now);
  const status = effectiveStatus(license, now);
  return (
    refusalForStatus(license, status, now) ??
    refusalForSeat(license, request.fingerprint, activation, now) ??
    refusalForEntitlements(license, request.entitlements, now) ??
    validVerdict(license, activation, now)
  );
}

/** A licence revoked, suspended (for an unpaid subscription or by hand) or expired past its grace is refused. */
function refusalForStatus(
  license: LicenseFacts,
  status: ReturnType<typeof effectiveStatus>,
  now: Date,
): Verdict | null {
  if (status === 'revoked') return no('revoked', 'the licence was revoked', 'contact_vendor', now);
  if (status === 'suspended')
    return license.subscription?.status === 'unpaid'
      ? no(
          'subscription_unpaid',
          'the subscription was not paid within its grace: the licence is suspended until a payment',
          'update_payment',
          now,
        )
      : no('suspended', 'the licence is suspended', 'contact_vendor', now);
  if (status === 'expired') return no('expired', expiredDetail(license), 'renew', now);
  return null;
}

/**
 * Under maintain_access an expired licence still downloads the releases published before its expiry
 * (release-access.ts grants them from this answer): the answer says which, so an app can tell its user
 * that renewing brings newer ones, not access as such.
 */
function expiredDetail(license: LicenseFacts): string {
  if (license.policy.expiration_strategy !== 'maintain_access' || !license.expires_at) return 'the licence has expired';
  return `the licence has expired; releases published before ${license.expires_at.toISOString()} stay available`;
}

/** A lapsed floating seat, or a licence that needs activation on a machine that has none (or no seat left). */
function refusalForSeat(
  license: LicenseFacts,
  fingerprint: string,
  activation: ActivationFacts,
  now: Date,
): Verdict | null {
  if (activation.leaseExpired)
    return no(
      'lease_expired',
      "this machine's floating seat lapsed (no heartbeat within the lease): activate it again",
      'activate',
      now,
    );
  if (license.policy.require_activation && !activation.fingerprintActive) {
    const max = license.policy.max_activations;
    if (max !== null && activation.count >= max)
      return no(
        'activation_limit_reached',
        `this licence is active on ${activation.count} of ${max} machines; deactivate one first`,
        'free_a_seat',
        now,
      );
    return no(
      'not_activated',
      fingerprint
        ? 'this machine is not activated for the licence'
        : 'this licence must be activated on a machine: send its fingerprint',
      'activate',
      now,
    );
  }
  return null;
}

/** The entitlements the app needs (none: not checked) that the licence does not include. */
function refusalForEntitlements(
  license: LicenseFacts,
  entitlements: readonly string[] | undefined,
  now: Date,
): Verdict | null {
  if (entitlements?.length) {
    const missing = missingEntitlements(entitlements, license.policy.entitlements, license.extra_entitlements);
    if (missing.length)
      return no(
        'entitlements_missing',
        `the licence does not include ${missing.length === 1 ? 'the entitlement' : 'the entitlements'} ${missing.join(', ')}`,
        'contact_vendor',
        now,
      );
  }
  return null;
}

/** Valid: until the expiry or the lease's end, at most MAX_OFFLINE_MS ahead; in grace, until the grace ends. */
function validVerdict(license: LicenseFacts, activation: ActivationFacts, now: Date): Verdict {
  const leaseEnd = activation.leaseEndsAt ?? Number.POSITIVE_INFINITY;
  const horizon = Math.min(secondOf(now) + MAX_OFFLINE_MS, leaseEnd);
  // A past-due subscription: still valid, and the app can tell the user to update their card.
  const pastDue = license.subscription?.status === 'past_due';
  if (inGrace(license, now)) {
    const end = validUntil(license)!;
    return {
      valid: true,
      code: 'expired_in_grace',
      detail: pastDue
        ? `the subscription's payment failed; the licence keeps working until ${end.toISOString()}`
        : `the licence expired; it keeps working until ${end.toISOString()}`,
      nextAction: pastDue ? 'update_payment' : 'renew',
      cacheUntil: new Date(Math.min(horizon, end.getTime())),
      visible: true,
    };
  }
  const until = license.expires_at ? Math.min(horizon, license.expires_at.getTime()) : horizon;
  return {
    valid: true,
    code: 'valid',
    detail: pastDue
      ? "the licence is valid; the subscription's last payment failed: update the payment method"
      : 'the licence is valid',
    nextAction: pastDue ? 'update_payment' : 'none',
    cacheUntil: new Date(until),
    visible: true,
  };
}

/** A verdict as the ValidateLicense contract carries it (the licence, when visible, is added by the caller). */
export const verdictFields = (v: Verdict) => ({
  valid: v.valid,
  code: v.code,
  detail: v.detail,
  next_action: v.nextAction,
  cache_until: v.cacheUntil.toISOString(),
});
