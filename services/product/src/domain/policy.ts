import { AppError } from '@licensing/runtime';
import { DEFAULT_POLICY, policyProblems, withPolicyDefaults, type LicensePolicy, type Policy } from '@licensing/proto';

// The licence policy of a product: its fields, ranges and defaults are proto/rules/policy.ts's; this
// service is where a policy is accepted, so it refuses one that breaks them.

/** From the contract to the stored form, refusing values out of range (the first problem found). */
export function checkPolicy(p: LicensePolicy | undefined): Policy {
  if (!p) return { ...DEFAULT_POLICY };
  const [problem] = policyProblems(p);
  if (problem) throw AppError.invalid(problem.field, problem.message);
  return withPolicyDefaults(p);
}
