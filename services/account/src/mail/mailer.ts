import { AppError, mailTransportFor } from '@licensing/runtime';

/** One plain-text e-mail. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  /** Where mail goes, for the start-up log (never with credentials). */
  readonly describe: string;
}

/**
 * Sign-up mail through MAIL_URL (runtime's mailTransportFor: SMTP in production, a folder in
 * development); without one, sign-up is closed (accounts come from `npm run admin`).
 */
export function mailerFor(url: string, from: string): Mailer | undefined {
  const transport = mailTransportFor(url, { from, connectMs: 5000, socketMs: 10_000 });
  if (!transport) return undefined;
  return {
    describe: transport.describe,
    async send(mail: Mail) {
      try {
        await transport.send(mail);
      } catch {
        // The SMTP server's answer may name hosts and users; the caller learns only that it failed.
        throw new AppError('service_unavailable', 'the e-mail could not be sent; try again later');
      }
    },
  };
}
