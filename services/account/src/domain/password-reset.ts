import type { AccountActionType } from '@licensing/proto';
import { personAction } from './person-action';
import type { Mail } from '../mail/mailer';

// A forgotten password: the sign-in page asks for a link, which is mailed to the address if a person
// signs in with it (the page says the same either way) and works once within the hour. The new
// password ends every other session of that person: whoever knew the old one is signed out.
export const PASSWORD_RESET_TTL_MS = 3600 * 1000;

/** Tokens are made and digested as sign-up's are (signup.ts): 32 random bytes, base64url, stored by SHA-256. */
export {
  digestSignupToken as digestResetToken,
  isSignupToken as isResetToken,
  newSignupToken as newResetToken,
} from './signup';

export function passwordResetMail(to: string, link: string): Mail {
  return {
    to,
    subject: 'Reset your password',
    text: [
      'Someone, hopefully you, asked to reset the password you sign in to the dashboard with.',
      '',
      'To choose a new one, open this link within the hour (it works once):',
      link,
      '',
      'If it was not you, ignore this e-mail: your password stays as it is.',
    ].join('\n'),
  };
}

/** The audit log's record of a password changed (by its owner, signed in) or reset (by the link): theirs. */
export const passwordAction = (
  type: AccountActionType,
  user: { _id: string; account_id: string; email: string },
  now: Date,
) => personAction(type, user, now);
