import type { LicensePolicy } from '../gen/licensing/v1/product';
import { entitlementsProblem, MAX_ENTITLEMENTS } from './entitlements';
import { expirationStrategies, refundActions } from './vocabulary';

// The licence policy of a product, of which every licence keeps a copy: declared once here, each field
// with its type, range, default and meaning. From it come the product service's checks and stored
// form, the contract mapping both ways (product and licence services, the gateway's validation cache),
// the REST shape the gateway accepts and answers with their OpenAPI schemas, and the dashboard's
// product form. The LicensePolicy message of product.proto cannot come from it: the compiler holds its
// field names to this declaration (contractNamesEveryPolicyField below), and
// test/repository/vocabularies.test.ts its field types and the table of docs/api.md.

interface Described {
  /** What the field means, as the OpenAPI document says it. */
  description: string;
  /** Products and licences stored before the field existed lack it: every reader gives them the default. */
  addedLater?: true;
}
export interface IntRule extends Described {
  kind: 'int';
  min: number;
  max: number;
  /** null is a value of its own ("no limit"), absent from the contract's message. */
  nullable: boolean;
  default: number | null;
}
export interface BoolRule extends Described {
  kind: 'bool';
  default: boolean;
}
export interface WordRule extends Described {
  kind: 'enum';
  values: readonly string[];
  /** Also what the contract's empty string means. */
  default: string;
}
/** A list of entitlement codes (entitlements.ts): at most `max`, each once. */
export interface EntitlementsRule extends Described {
  kind: 'entitlements';
  max: number;
  default: readonly string[];
}
export type PolicyRule = IntRule | BoolRule | WordRule | EntitlementsRule;

export const policyRules = {
  duration_days: {
    kind: 'int',
    min: 1,
    max: 36_500,
    nullable: true,
    default: null,
    description: 'Days a licence is valid from issue; null = perpetual',
  },
  max_activations: {
    kind: 'int',
    min: 1,
    max: 10_000,
    nullable: true,
    default: null,
    description: 'Machines a licence may be activated on; null = unlimited',
  },
  grace_days: {
    kind: 'int',
    min: 0,
    max: 365,
    nullable: false,
    default: 0,
    description: 'Days after expiry during which validation still passes (code expired_in_grace)',
  },
  require_activation: {
    kind: 'bool',
    default: false,
    description: 'Validation fails (not_activated) unless the fingerprint is activated',
  },
  validate_keys_see_email: {
    kind: 'bool',
    default: false,
    description: 'validate-scope API keys see customer_email in validation answers',
  },
  refund_action: {
    kind: 'enum',
    values: refundActions,
    default: 'revoke',
    description: 'What a refunded checkout payment does to the licence it paid for (default revoke)',
    addedLater: true,
  },
  lease_seconds: {
    kind: 'int',
    min: 30,
    max: 86_400,
    nullable: true,
    default: null,
    description:
      'Floating seats: an activation lapses unless heartbeated within this many seconds, and a lapsed one no longer takes a slot; null = node-locked',
    addedLater: true,
  },
  entitlements: {
    kind: 'entitlements',
    max: MAX_ENTITLEMENTS,
    default: [],
    description:
      'Feature codes every licence of the product includes, live: a change reaches existing licences at once, without renewal (each once, at most 100); a licence can add its own',
    addedLater: true,
  },
  customer_deactivations_per_30_days: {
    kind: 'int',
    min: 0,
    max: 100,
    nullable: false,
    default: 3,
    description:
      'Machines a customer may free themselves in the customer portal per licence and rolling 30 days (0 = none: only the vendor frees machines)',
    addedLater: true,
  },
  payment_grace_days: {
    kind: 'int',
    min: 0,
    max: 60,
    nullable: false,
    default: 7,
    description:
      "Subscriptions: days a past_due subscription's licence stays valid after its period end (next_action update_payment); then it is suspended (subscription_unpaid)",
    addedLater: true,
  },
  max_file_ttl_days: {
    kind: 'int',
    min: 1,
    max: 365,
    nullable: false,
    default: 30,
    description:
      'Most days a licence file asked for with an app credential (a License credential or a validate-scope key) stays valid; full-scope keys may ask for up to 365',
    addedLater: true,
  },
  expiration_strategy: {
    kind: 'enum',
    values: expirationStrategies,
    default: 'restrict',
    description:
      'What an expired licence may still download: restrict, nothing; maintain_access, the releases published before its expiry; revoke_access, nothing, and the licence is revoked when its grace ends',
    addedLater: true,
  },
} as const satisfies Record<string, PolicyRule>;

type Rules = typeof policyRules;
export type PolicyField = keyof Rules;
export const policyFields = Object.keys(policyRules) as PolicyField[];

type ValueOf<R> = R extends { kind: 'int'; nullable: true }
  ? number | null
  : R extends { kind: 'int' }
    ? number
    : R extends { kind: 'bool' }
      ? boolean
      : R extends { values: readonly (infer W)[] }
        ? W
        : R extends { kind: 'entitlements' }
          ? string[]
          : never;
/** A policy with every field (null = no limit). */
export type Policy = { -readonly [F in PolicyField]: ValueOf<Rules[F]> };
type LaterField = { [F in PolicyField]: Rules[F] extends { addedLater: true } ? F : never }[PolicyField];
/** A policy as a product or licence stored it: the fields added later may be missing. */
export type StoredPolicy = Omit<Policy, LaterField> & Partial<Pick<Policy, LaterField>>;

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Does not compile when product.proto's LicensePolicy and policyRules name different fields. */
export const contractNamesEveryPolicyField: Same<keyof LicensePolicy, PolicyField> = true;

const rule = (field: PolicyField): PolicyRule => policyRules[field];

function valueOr(r: PolicyRule, value: unknown): Policy[PolicyField] {
  switch (r.kind) {
    case 'int':
      return typeof value === 'number' ? value : r.default;
    case 'bool':
      return typeof value === 'boolean' ? value : r.default;
    case 'enum':
      return (typeof value === 'string' && r.values.includes(value) ? value : r.default) as Policy[PolicyField];
    case 'entitlements':
      // A copy: a policy's list is never shared with the document or message it came from.
      return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [...r.default];
  }
}

/**
 * Every field of a policy, each missing one (absent, null where null is not a value, an empty or unknown
 * word) given its default: the contract's message, a stored policy, or a REST body already shape-checked.
 */
export function withPolicyDefaults(p: Partial<Record<PolicyField, unknown>> | undefined): Policy {
  return Object.fromEntries(policyFields.map((f) => [f, valueOr(rule(f), p?.[f])])) as Policy;
}

export const DEFAULT_POLICY: Policy = withPolicyDefaults(undefined);

/** The contract's message of a policy: a null number (no limit) is absent there. */
export function policyToContract(p: StoredPolicy): LicensePolicy {
  const full = withPolicyDefaults(p);
  return Object.fromEntries(policyFields.map((f) => [f, full[f] ?? undefined])) as unknown as LicensePolicy;
}

export interface PolicyProblem {
  field: string;
  message: string;
}

/**
 * What is wrong with a policy as sent, in field order: a number out of its range, a word not among its
 * values (empty = the default), a list of entitlement codes that is not one, then grace without an expiry, which would never apply.
 */
export function policyProblems(p: LicensePolicy): PolicyProblem[] {
  const problems: PolicyProblem[] = [];
  for (const f of policyFields) {
    const r = rule(f);
    const value: unknown = p[f];
    const field = `policy.${f}`;
    if (r.kind === 'int' && value !== undefined) {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < r.min || value > r.max)
        problems.push({ field, message: `${field} must be a whole number from ${r.min} to ${r.max}` });
    } else if (r.kind === 'enum' && value !== undefined && value !== '' && !r.values.includes(value as string)) {
      problems.push({ field, message: `${field} must be one of ${r.values.join(', ')}` });
    } else if (r.kind === 'entitlements' && value !== undefined) {
      const problem = entitlementsProblem(field, value);
      if (problem) problems.push(problem);
    }
  }
  if (!problems.length && p.grace_days > 0 && p.duration_days === undefined)
    problems.push({
      field: 'policy.grace_days',
      message: 'policy.grace_days only applies to licences that expire: set policy.duration_days too',
    });
  return problems;
}
