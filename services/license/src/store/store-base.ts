import type { LicenseModels } from './models';

// What the licence store's query files share. LicenseStore (queries.ts) is one class for its callers;
// its queries are in a file per subject (expiry, activations, erasure, the licences themselves), each
// a class extending the one before it: a chain that only keeps each file about one kind of query, not
// a hierarchy of meaning (no subject's queries call another's).

/** The store's models: the first link of the chain. */
export class LicenseStoreBase {
  constructor(readonly models: LicenseModels) {}
}

export const isDuplicate = (err: unknown) => (err as { code?: number })?.code === 11000;

/** No query here runs longer than this on the server (the gRPC deadline is 5 s). */
export const QUERY_MAX_MS = 5000;
