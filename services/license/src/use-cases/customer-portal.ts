import { AppError, isId } from '@licensing/runtime';
import { EMAIL_MAX_LENGTH, parseLicenseKey } from '@licensing/proto';
import { normalEmail } from '../domain/erasure';
import type { ActivationDoc } from '../store/models';
import { freeWithinCustomerAllowance } from './activations';
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
 * customer_deactivations_per_30_days (freeWithinCustomerAllowance).
 */
export async function deactivateForCustomer(deps: LicenseDeps, req: CustomerDeactivation): Promise<ActivationDoc> {
  const email = normalEmail(req.customer_email);
  if (!email || email.length > EMAIL_MAX_LENGTH || !isId('act', req.activation_id)) throw notTheirs();
  const parsed = parseLicenseKey(req.key);
  const license = parsed.ok ? await deps.store.findInAccount(req.account_id, parsed.key) : null;
  if (!license || license.customer_email_lc !== email) throw notTheirs();
  const activation = await deps.store.findAnyActivation(license._id, req.activation_id);
  if (!activation || activation.deactivated_at) throw notTheirs();

  const done = await freeWithinCustomerAllowance(deps, license, activation._id, 'portal');
  if (!done) throw notTheirs(); // freed by someone else meanwhile
  return done;
}
