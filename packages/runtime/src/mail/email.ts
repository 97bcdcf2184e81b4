import { AppError } from '../core/errors';
import { EMAIL_MAX_LENGTH, EMAIL_LOCAL_PART_MAX_LENGTH } from '@licensing/proto';

// Deliberately simple: one @, a dot in the domain, no spaces, RFC 5321 lengths.
// Deliverability is the vendor's business; obvious garbage is ours.
const SHAPE = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

export function checkEmail(field: string, value: string): string {
  const email = value.trim();
  if (!email) throw AppError.invalid(field, `${field} is required`);
  const at = email.lastIndexOf('@');
  if (email.length > EMAIL_MAX_LENGTH || at > EMAIL_LOCAL_PART_MAX_LENGTH || !SHAPE.test(email))
    throw AppError.invalid(field, `${field} must be a valid e-mail address`);
  return email;
}
