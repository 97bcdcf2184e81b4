import { AppError, checkEmail, newEvent, newId } from '@licensing/runtime';
import { escapeRegExp, normalEmail, replaceEmail } from '../domain/erasure';
import { licenseEvent } from '../events/license-events';
import type { LicenseDoc } from '../store/models';
import type { LicenseDeps } from './deps';
import type { TransferErasure } from './license-core';

/** Licences read per batch (one indexed read each): an account's customer rarely has more than a few. */
const BATCH = 100;

export interface EraseCustomerInput {
  account_id: string;
  email: string;
  placeholder: string;
}

/**
 * Erases a customer's e-mail from the account's licences and licence batches: each licence whose customer_email is the
 * e-mail (found on the customer_email_lc index) takes the placeholder, with its license.updated (the
 * caches of licences, here and in the gateways, follow those events, so no cached answer keeps the old
 * e-mail), after the names of its activations (active or freed) have had the e-mail replaced. Then one
 * customer.erased for the call, which names the placeholder and the number of licences, never the
 * e-mail. The items of the account's licence batches (POST /api/v1/licenses/batch) that name the e-mail
 * take the placeholder too, so GetLicenseBatch, and the notification service's batch mail that reads it
 * when a license.batch_completed arrives late, never give it again. The answer counts the licences and
 * batches changed. Idempotent: a second call finds none and changes nothing (it still says customer.erased).
 * A batch still running when its customer is erased may write its items back as it read them (a run
 * writes all of them): erase again once it is done.
 *
 * Crash-safe without transactions: the names are changed before the licence that leads to them, so a
 * call cut short is finished by the next one (the gateway retries an erasure that failed).
 */
export async function eraseCustomer(
  { store, outbox, clock, transfer }: Pick<LicenseDeps, 'store' | 'outbox' | 'clock'> & { transfer: TransferErasure },
  req: EraseCustomerInput,
): Promise<number> {
  const email = normalEmail(req.email);
  if (!email || email.length > 254)
    throw AppError.invalid('email', 'email must be an e-mail address of at most 254 characters');
  const placeholder = checkEmail('placeholder', req.placeholder);
  if (normalEmail(placeholder).includes(email))
    throw AppError.invalid('placeholder', 'the placeholder must not contain the e-mail');
  const pattern = escapeRegExp(email);
  let erased = 0;
  let after = '';
  for (;;) {
    const batch = await store.licensesOfCustomer(req.account_id, email, after, BATCH);
    for (const license of batch) if (await eraseFromLicense(license)) erased++;
    if (batch.length < BATCH) break;
    after = batch[batch.length - 1]._id;
  }
  const licenses = erased;
  erased += await transfer.eraseFromBatches(req.account_id, email, placeholder);
  await transfer.deleteFinishedExports(req.account_id, clock.now());
  const now = clock.now();
  const event = newEvent('customer.erased', req.account_id, { placeholder, licenses }, now);
  const id = newId('era');
  await store.insertErasure({ _id: id, account_id: req.account_id, placeholder, licenses, created_at: now }, [event]);
  outbox.flush(store.models.Erasure, id, [event]);
  return erased;

  async function eraseFromLicense(license: LicenseDoc): Promise<boolean> {
    for (const a of await store.activationsNamed(license._id, pattern))
      await store.renameActivation(a._id, a.name, replaceEmail(a.name, email, placeholder));
    const now = clock.now();
    const changed: LicenseDoc = {
      ...license,
      customer_email: placeholder,
      customer_email_lc: placeholder.toLowerCase(),
    };
    const events = [licenseEvent('license.updated', changed, now)];
    if (!(await store.replaceCustomerEmail(license, placeholder, events))) return false;
    outbox.flush(store.models.License, license._id, events);
    return true;
  }
}
