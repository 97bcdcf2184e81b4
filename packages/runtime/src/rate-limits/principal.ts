import type { KeyScope, StoredStatus } from '@licensing/proto';

// Who a request counts against: the gateway's API keys and licence credentials, and the web
// component's signed-in sessions, spend the same account budgets (limiter.ts), so both name the
// caller the same way.

/** How the caller authenticated: an API key ("Bearer"), or a licence key ("License", an app acting as its licence). */
export type CredentialKind = 'api_key' | 'license';

/** The licence a "License" credential names. */
export interface LicenseIdentity {
  /** Canonical form (proto/rules/license-key.ts). */
  key: string;
  /** sha256 of the canonical key (base64url): what the caches and counters use, never the key itself. */
  digest: string;
  /** '' for an unknown key. */
  id: string;
  productId: string;
  /** The stored status ('unknown': no licence has this key): only an active licence may act beyond validation. */
  status: StoredStatus | 'unknown';
}

/** Who is calling: the account of an API key (or of a licence), its plan and limits, and the key's scope. */
export interface Principal {
  /** '' only for an unknown licence key (it may validate, and gets not_found). */
  accountId: string;
  plan: string;
  /** Operator overrides of the rate limits; 0 = the plan's default. */
  perMinuteOverride: number;
  perHourOverride: number;
  /** The API key's id; for a licence credential the licence's id. */
  keyId: string;
  /** A licence credential acts with the validate scope (it is app traffic), restricted further to its own licence. */
  scope: KeyScope;
  /** An API key's role (proto/rules/roles.ts); absent for a licence credential, and for a key made before roles (its scope's). */
  role?: string;
  credential: CredentialKind;
  /** Set for the licence credential. */
  license?: LicenseIdentity;
}
