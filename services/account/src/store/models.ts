import { Schema, type Connection, type Model } from 'mongoose';
import { outboxFields } from '@licensing/runtime';
import {
  API_KEY_ROLES,
  keyScopes,
  plans,
  type ApiKeyRole,
  type DomainEvent,
  type KeyScope,
  type Plan,
} from '@licensing/proto';

export interface AccountDoc {
  _id: string;
  name: string;
  plan: Plan;
  /** Operator overrides of the rate limits; null = the plan's default. */
  per_minute_limit: number | null;
  per_hour_limit: number | null;
  /** Where buyers write for help (shown in the purchase e-mail); absent or '' = not set. */
  support_email?: string;
  /** Every member must sign in with a second factor (absent = false). */
  require_mfa?: boolean;
  created_at: Date;
  outbox?: Record<string, DomainEvent>;
}

export interface ApiKeyDoc {
  _id: string;
  account_id: string;
  prefix: string;
  /** HMAC-SHA256 of the full key with the server's pepper; the key itself is never stored. */
  digest: string;
  /** Which API_KEY_PEPPER version made `digest` (migration 0002 gives older keys "legacy"). */
  pepper_id?: string;
  scope: KeyScope;
  /** What it may do (proto/rules/roles.ts); absent on a key made before keys had roles: its scope's. */
  role?: ApiKeyRole;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  /** The audit trail lives on the key, written with the change: a user's e-mail or "operator". */
  created_by: string;
  revoked_by: string | null;
  /**
   * "1".."MAX_LIVE_KEYS" while the key is live, unique per account, so the cap holds under concurrency
   * (runtime/store/slots.ts); "freed:<id>" once revoked; "legacy:<id>" for a live key stored before slots
   * existed (counted by the cap, holding no numbered slot).
   */
  slot_key: string;
  outbox?: Record<string, DomainEvent>;
}

export interface UserDoc {
  _id: string;
  account_id: string;
  /** Lower-cased; unique across the system. */
  email: string;
  password_hash: string;
  created_at: Date;
  /** Two-factor sign-in, once enrolled (domain/totp.ts); absent or null: none. */
  mfa?: MfaFields | null;
  /** A secret shown for enrolment, waiting for its first code (replaced by a new enrolment). */
  mfa_enrolment?: { secret: string; created_at: Date } | null;
  /** The account's own actions about this person (a password changed), for the audit log. */
  outbox?: Record<string, DomainEvent>;
}

export interface MfaFields {
  /** The TOTP secret in base32, sealed (domain/mfa-keyring.ts): it must be read again to check a code. */
  secret: string;
  enabled_at: Date;
  /** The step of the last code accepted: a code of this step or an earlier one is refused (no replay). */
  last_step: number;
  /** SHA-256 of each recovery code not yet used. */
  recovery: string[];
}

/** A forgotten password's e-mailed link, waiting to be used once within the hour. */
export interface PasswordResetDoc {
  /** SHA-256 of the link's token. */
  _id: string;
  user_id: string;
  created_at: Date;
  expires_at: Date;
}

export interface SessionDoc {
  /** SHA-256 of the cookie token. */
  _id: string;
  user_id: string;
  account_id: string;
  csrf_token: string;
  created_at: Date;
  expires_at: Date;
  ended_at: Date | null;
  /** Where it was opened from (the dashboard's request), and when it was last used (within a minute). */
  ip?: string;
  user_agent?: string;
  last_seen_at?: Date;
  /**
   * 'code': the password was right and a second factor is awaited; such a session opens nothing but
   * the code form (absent: a full session). Its wrong codes are counted in code_failures.
   */
  stage?: 'code';
  code_failures?: number;
  /** The account requires two-factor sign-in and this person has none: the dashboard sends them to enrol. */
  must_enrol_mfa?: boolean;
}

/** A sign-up waiting for its owner to follow the e-mailed link; nothing else exists until then. */
export interface PendingSignupDoc {
  /** SHA-256 of the link's token. */
  _id: string;
  email: string;
  account_name: string;
  password_hash: string;
  created_at: Date;
  expires_at: Date;
}

export interface AccountModels {
  Account: Model<AccountDoc>;
  ApiKey: Model<ApiKeyDoc>;
  User: Model<UserDoc>;
  Session: Model<SessionDoc>;
  PendingSignup: Model<PendingSignupDoc>;
  PasswordReset: Model<PasswordResetDoc>;
}

function accountSchema(): Schema<AccountDoc> {
  const schema = new Schema<AccountDoc>(
    {
      _id: String,
      name: { type: String, required: true },
      plan: { type: String, required: true, enum: plans },
      support_email: { type: String, default: '' },
      require_mfa: Boolean,
      per_minute_limit: { type: Number, default: null },
      per_hour_limit: { type: Number, default: null },
      created_at: { type: Date, required: true },
      ...outboxFields,
    },
    { versionKey: false, collection: 'accounts' },
  );
  return schema;
}

function apiKeySchema(): Schema<ApiKeyDoc> {
  const schema = new Schema<ApiKeyDoc>(
    {
      _id: String,
      account_id: { type: String, required: true },
      prefix: { type: String, required: true },
      digest: { type: String, required: true, unique: true },
      pepper_id: { type: String },
      scope: { type: String, required: true, enum: keyScopes },
      role: { type: String, enum: API_KEY_ROLES },
      name: { type: String, default: '' },
      created_at: { type: Date, required: true },
      last_used_at: { type: Date, default: null },
      revoked_at: { type: Date, default: null },
      created_by: { type: String, default: 'operator' },
      revoked_by: { type: String, default: null },
      slot_key: { type: String, required: true },
      ...outboxFields,
    },
    { versionKey: false, collection: 'api_keys' },
  );
  schema.index({ account_id: 1, _id: -1 });
  // Unique per account; slot_key first so that the start-up backfill finds keys without one by index.
  schema.index({ slot_key: 1, account_id: 1 }, { unique: true });
  // The audit trail reads key actions by time: creations, and revocations.
  schema.index({ account_id: 1, created_at: -1 });
  schema.index({ account_id: 1, revoked_at: -1 });
  return schema;
}

function userSchema(): Schema<UserDoc> {
  const schema = new Schema<UserDoc>(
    {
      _id: String,
      account_id: { type: String, required: true, index: true },
      email: { type: String, required: true, unique: true },
      password_hash: { type: String, required: true },
      created_at: { type: Date, required: true },
      mfa: Schema.Types.Mixed,
      mfa_enrolment: Schema.Types.Mixed,
      ...outboxFields,
    },
    { versionKey: false, collection: 'users' },
  );
  return schema;
}

function sessionSchema(): Schema<SessionDoc> {
  const schema = new Schema<SessionDoc>(
    {
      _id: String,
      user_id: { type: String, required: true },
      account_id: { type: String, required: true },
      csrf_token: { type: String, required: true },
      created_at: { type: Date, required: true },
      // Real MongoDB removes expired sessions; FerretDB keeps them, and reads check expires_at.
      expires_at: { type: Date, required: true, index: { expireAfterSeconds: 0 } },
      ended_at: { type: Date, default: null },
      ip: String,
      user_agent: String,
      last_seen_at: Date,
      stage: String,
      code_failures: Number,
      must_enrol_mfa: Boolean,
    },
    { versionKey: false, collection: 'sessions' },
  );
  // A new password ends the person's other sessions.
  schema.index({ user_id: 1 });
  return schema;
}

function pendingSignupSchema(): Schema<PendingSignupDoc> {
  const schema = new Schema<PendingSignupDoc>(
    {
      _id: String,
      email: { type: String, required: true },
      account_name: { type: String, required: true },
      password_hash: { type: String, required: true },
      created_at: { type: Date, required: true },
      // As sessions: MongoDB removes expired ones; on FerretDB reads check expires_at.
      expires_at: { type: Date, required: true, index: { expireAfterSeconds: 0 } },
    },
    { versionKey: false, collection: 'pending_signups' },
  );
  return schema;
}

function passwordResetSchema(): Schema<PasswordResetDoc> {
  return new Schema<PasswordResetDoc>(
    {
      _id: String,
      user_id: { type: String, required: true },
      created_at: { type: Date, required: true },
      // As sessions: MongoDB removes expired links; on FerretDB the use checks expires_at.
      expires_at: { type: Date, required: true, index: { expireAfterSeconds: 0 } },
    },
    { versionKey: false, collection: 'password_resets' },
  );
}

export function accountModels(conn: Connection): AccountModels {
  return {
    PasswordReset: conn.model<PasswordResetDoc>('PasswordReset', passwordResetSchema()),
    PendingSignup: conn.model<PendingSignupDoc>('PendingSignup', pendingSignupSchema()),
    Account: conn.model<AccountDoc>('Account', accountSchema()),
    ApiKey: conn.model<ApiKeyDoc>('ApiKey', apiKeySchema()),
    User: conn.model<UserDoc>('User', userSchema()),
    Session: conn.model<SessionDoc>('Session', sessionSchema()),
  };
}
