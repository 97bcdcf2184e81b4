import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createTransport } from 'nodemailer';
import { AppError } from '@licensing/runtime';

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
 * MAIL_URL chooses the transport:
 * - `smtp://<user>:<password>@host:587` or `smtps://…:465`: a real mail server (production);
 * - `dir:///path/to/folder`: each mail is written there as a JSON file (development
 *   and tests: `npm start` uses .data/mail, and a test reads the link from it);
 * - empty: no transport; sign-up is then closed (accounts come from `npm run admin`).
 */
export function mailerFor(url: string, from: string): Mailer | undefined {
  if (!url) return undefined;
  if (url.startsWith('dir://')) return new DirMailer(new URL(url).pathname);
  if (/^smtps?:\/\//.test(url)) return new SmtpMailer(url, from);
  throw new Error('MAIL_URL must start with smtp://, smtps:// or dir://');
}

class SmtpMailer implements Mailer {
  private readonly transport;
  readonly describe: string;

  constructor(
    url: string,
    private readonly from: string,
  ) {
    this.transport = createTransport(url, { connectionTimeout: 5000, greetingTimeout: 5000, socketTimeout: 10_000 });
    const u = new URL(url);
    this.describe = `${u.protocol}//${u.host}`;
  }

  async send(mail: Mail): Promise<void> {
    try {
      await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text });
    } catch {
      // The SMTP server's answer may name hosts and users; the caller learns only that it failed.
      throw new AppError('service_unavailable', 'the e-mail could not be sent; try again later');
    }
  }
}

class DirMailer implements Mailer {
  readonly describe: string;

  constructor(private readonly dir: string) {
    this.describe = `dir://${dir}`;
  }

  async send(mail: Mail): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    // Written under a temporary name, then renamed: a reader never sees half a mail.
    const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.json`;
    const tmp = join(this.dir, `.${name}.tmp`);
    await writeFile(tmp, JSON.stringify(mail, null, 2), { mode: 0o600 });
    await rename(tmp, join(this.dir, name));
  }
}
