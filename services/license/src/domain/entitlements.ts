import type { PolicySnapshot } from '@licensing/proto';

// A licence keeps the rest of its product's policy from issue or renewal, but not its entitlements:
// those are the product's, live (a vendor adding a feature to a plan gives it to every customer of
// that plan at once, as Keygen does). One rule for storing and one for reading, so documents stored
// while licences kept a copy read right too.

/** The policy a licence stores: its product's, without the entitlements (never read back). */
export const storedPolicy = (policy: PolicySnapshot): PolicySnapshot => ({ ...policy, entitlements: [] });

/**
 * A licence as it is answered: its policy's entitlements are the product's current ones (`codes`),
 * whatever its stored policy holds. Its own extras are kept apart, and the effective set is both
 * (effectiveEntitlements in proto/rules).
 */
export function withProductEntitlements<T extends { policy: PolicySnapshot }>(doc: T, codes: readonly string[]): T {
  return { ...doc, policy: { ...doc.policy, entitlements: [...codes] } };
}

/** The distinct products of some licences, in first-seen order (a page looks each up once). */
export const distinctProducts = (docs: readonly { product_id: string }[]): string[] => [
  ...new Set(docs.map((d) => d.product_id)),
];
