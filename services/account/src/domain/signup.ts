import { randomBytes } from 'node:crypto';
import { sha256 } from '@licensing/runtime';
import type { Mail } from '../mail/mailer';

// Sign-up never says whether an e-mail is registered: the form always answers
// "check your inbox", and only the inbox learns which case it was. A new
// address gets a link that creates the account; a registered one gets a note
// pointing to sign-in. Nothing exists for a new address until its link is used,
// so nobody can hold an e-mail address they do not read.
export const SIGNUP_LINK_TTL_MS = 24 * 3600 * 1000;

export function newSignupToken(): { token: string; digest: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, digest: digestSignupToken(token) };
}

export function digestSignupToken(token: string): string {
  return sha256(token, 'hex');
}

/** A token has the shape we issue; anything else is refused without a look-up. */
export const isSignupToken = (t: string) => /^[A-Za-z0-9_-]{43}$/.test(t);

export function confirmationMail(to: string, accountName: string, link: string): Mail {
  return {
    to,
    subject: 'Confirm your e-mail to create your account',
    text: [
      `Someone, hopefully you, asked to create the account "${accountName}" with this address.`,
      '',
      `To create it, open this link within 24 hours:`,
      link,
      '',
      'If it was not you, ignore this e-mail: nothing is created without the link.',
    ].join('\n'),
  };
}

export function alreadyRegisteredMail(to: string, signInLink: string): Mail {
  return {
    to,
    subject: 'You already have an account',
    text: [
      'Someone, hopefully you, tried to create an account with this address, which already has one.',
      '',
      `Sign in here instead: ${signInLink}`,
      '',
      'If it was not you, ignore this e-mail: nothing was changed.',
    ].join('\n'),
  };
}
