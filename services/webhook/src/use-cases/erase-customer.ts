import { AppError, checkEmail } from '@licensing/runtime';
import { EMAIL_MAX_LENGTH } from '@licensing/proto';
import { bodyPattern, eraseFromBody } from '../domain/erasure';
import type { DeliveryStore } from '../store/deliveries';

/** Deliveries looked at per batch (a bounded read of the account's index). */
const BATCH = 500;

/**
 * Replaces a customer's e-mail inside the account's stored delivery bodies with the placeholder (the
 * gateway's DELETE /api/v1/customers/{email}); the number of deliveries changed. Idempotent.
 *
 * Signatures are not stored: the dispatcher signs the body when it sends it (domain/delivery.ts), so a
 * delivery still pending or retried later goes out with the erased body, correctly signed. A delivery
 * already sent was signed over the old body; only the receiver has that.
 *
 * A rare administrative call: it walks the account's deliveries once, in bounded batches by id (the
 * retention of WEBHOOK_DELIVERY_RETENTION_DAYS bounds how many there are).
 */
export async function eraseCustomer(
  deliveries: Pick<DeliveryStore, 'bodiesMatching' | 'replaceBody'>,
  req: { account_id: string; email: string; placeholder: string },
  /** Told each delivery whose body changed (the dispatcher may hold it in memory). */
  changed: (deliveryId: string) => void = () => undefined,
): Promise<number> {
  const email = req.email.trim();
  if (!email || email.length > EMAIL_MAX_LENGTH)
    throw AppError.invalid('email', `email must be an e-mail address of at most ${EMAIL_MAX_LENGTH} characters`);
  const placeholder = checkEmail('placeholder', req.placeholder);
  if (placeholder.toLowerCase().includes(email.toLowerCase()))
    throw AppError.invalid('placeholder', 'the placeholder must not contain the e-mail');
  const pattern = bodyPattern(email);
  let erased = 0;
  for (let after = ''; ; ) {
    const { matches, last } = await deliveries.bodiesMatching(req.account_id, pattern, after, BATCH);
    for (const d of matches) {
      const body = eraseFromBody(d.body, email, placeholder);
      if (body !== d.body && (await deliveries.replaceBody(d._id, d.body, body))) {
        changed(d._id);
        erased++;
      }
    }
    if (!last) break;
    after = last;
  }
  return erased;
}
