import { AppError, isId } from '@licensing/runtime';
import { parseLicenseKey, withPolicyDefaults } from '@licensing/proto';
import { describeMoment, judgeCustomerDeactivation, windowStart } from '../domain/customer-deactivations';
import { normalEmail } from '../domain/erasure';
import type { ActivationDoc } from '../store/models';
import { freeActivation } from './activations';
import type { LicenseDeps } from './deps';

export interface CustomerDeactivation {
  account_id: string;
  key: string;
  activation_id: string;
  /** The portal session's e-mail. */
  customer_email: string;
}

/**
 * One answer for every way the request names something that is not the customer's: another account's
 * licence, another customer's, a typo, another licence's activation, a freed one. The portal shows a
 * 404 page and cannot tell which (nor whether the key exists).
 */
const notTheirs = () => AppError.notFound('licence');

/**
 * The customer frees one of their machines (the customer portal), within the policy's
 * customer_deactivations_per_30_days, through the vendor's deactivation path with reason "customer".
 *
 * The count and the deactivation are two operations, and the store has no transactions (FerretDB's
 * updates are not even atomic): two requests of the same customer at the same moment (a double click,
 * two tabs) can both read a count under the limit and both free a machine, so a race lets a customer
 * free at worst one extra machine per request in flight then. Nothing is half-written either way: the
 * record that is counted is the deactivation itself (reason and time on the activation, one write
 * with its license.deactivated), never a separate counter that a crash could leave out of step.
 */
export async function deactivateForCustomer(deps: LicenseDeps, req: CustomerDeactivation): Promise<ActivationDoc> {
  const email = normalEmail(req.customer_email);
  if (!email || email.length > 254 || !isId('act', req.activation_id)) throw notTheirs();
  const parsed = parseLicenseKey(req.key);
  const license = parsed.ok ? await deps.store.findInAccount(req.account_id, parsed.key) : null;
  if (!license || license.customer_email_lc !== email) throw notTheirs();
  const activation = await deps.store.findAnyActivation(license._id, req.activation_id);
  if (!activation || activation.deactivated_at) throw notTheirs();

  // A licence stored before the setting existed has its default (3).
  const limit = withPolicyDefaults(license.policy).customer_deactivations_per_30_days;
  const now = deps.clock.now();
  const recent = await deps.store.customerDeactivationsSince(license._id, windowStart(now), limit);
  const verdict = judgeCustomerDeactivation(limit, recent, now);
  if (!verdict.allowed && verdict.reason === 'disabled')
    throw new AppError(
      'conflict',
      'machines of this licence are freed by the vendor only: contact the vendor to free one',
    );
  if (!verdict.allowed)
    throw AppError.rateLimited(
      `you have freed ${limit} machine${limit === 1 ? '' : 's'} of this licence in the last 30 days; you can free another machine on ${describeMoment(verdict.nextAt)}`,
      verdict.retryAfterS,
    );
  const done = await freeActivation(deps, license, activation._id, 'customer');
  if (!done) throw notTheirs(); // freed by someone else meanwhile
  return done;
}
