/**
 * What one account may have of the bulk work every account shares the services for (docs/api.md,
 * "Bounded work"): the same on every plan, shown by `GET /api/v1/status` under `account_limits`. An
 * import or an export is a long job of the licence service; one of each per account at a time keeps a
 * tenant from queueing the whole service behind its own.
 */
export const accountLimits = {
  /** Imports waiting (uploading or queued) or running at once (409 for another). */
  imports_at_once: 1,
  /** Exports running at once (409 for another). */
  exports_at_once: 1,
  /** Products (409 for one more). */
  products: 1000,
  /** Columns of an import's CSV header (400 `body` for a wider one). */
  import_header_columns: 256,
  /** Rows of one import refused for a key held elsewhere before the import fails. */
  import_refused_keys: 20,
  /** Members invited or active (409 for one more invitation): each invitation is a mail the service sends. */
  members: 100,
} as const;

/** How soon an invitation may be sent again (409 before): a resend is a mail to someone outside the account. */
export const INVITATION_RESEND_AFTER_MS = 60_000;

/** The longest name an API key may have (400 `name` beyond it), on the REST API and the CLI. */
export const API_KEY_NAME_MAX_LENGTH = 100;
