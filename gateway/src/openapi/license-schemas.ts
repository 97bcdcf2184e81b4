import { policyRules } from '@licensing/proto';
import { int, obj, orNull, type Schema, time } from './schema-primitives';

// The parts of the License schema (schemas.ts) about a licence's own terms (docs/api.md, "Per-licence
// terms"): each field only when the licence has it, the numbers with the policy rule's lower bound.

/** What differs from the product's policy for this licence: `{"max_activations": 5}`, `{}` when nothing. */
export const licenseOverrides: Schema = obj(
  {
    expires_at: orNull(time('Its own expiry (null: perpetual), until a renewal replaces it')),
    max_activations: orNull(int(policyRules.max_activations.description, { minimum: policyRules.max_activations.min })),
    lease_seconds: orNull(int(policyRules.lease_seconds.description, { minimum: policyRules.lease_seconds.min })),
  },
  [],
  {
    description:
      "The licence's own terms, only those that differ from its product's policy ({} when none); its policy holds them",
  },
);
