import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createTransport } from 'nodemailer';

/** One customer e-mail: multipart text and HTML, with attachments. */
export interface OutgoingMail {
  /** "Vendor name" <address>: the display name is the vendor's. */
  from: { name: string; address: string };
  replyTo?: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  attachments: { filename: string; content: string; contentType: string }[];
  /** The Message-ID, from the mail's id: a resend after a crash mid-send is recognisable as the same mail. */
  messageId: string;
}

export interface MailTransport {
  send(mail: OutgoingMail): Promise<void>;
  /** Where mail goes, for the start-up log (never with credentials). */
  readonly describe: string;
  close(): void;
}

/**
 * MAIL_URL chooses the transport, as for sign-up mail (services/account/src/mail/mailer.ts):
 * `smtp://…`/`smtps://…` a mail server, `dir:///folder` one JSON file per mail
 * (development: `npm start` uses .data/mail), empty: none (mail stays queued).
 */
export function transportFor(url: string, timeoutMs: number): MailTransport | undefined {
  if (!url) return undefined;
  if (url.startsWith('dir://')) return new DirTransport(new URL(url).pathname);
  if (/^smtps?:\/\//.test(url)) return new SmtpTransport(url, timeoutMs);
  throw new Error('MAIL_URL must start with smtp://, smtps:// or dir://');
}

class SmtpTransport implements MailTransport {
  private readonly transport;
  readonly describe: string;

  constructor(url: string, timeoutMs: number) {
    this.transport = createTransport(url, {
      connectionTimeout: Math.min(timeoutMs, 10_000),
      greetingTimeout: Math.min(timeoutMs, 10_000),
      socketTimeout: timeoutMs,
    });
    const u = new URL(url);
    this.describe = `${u.protocol}//${u.host}`;
  }

  async send(mail: OutgoingMail): Promise<void> {
    await this.transport.sendMail({
      from: mail.from,
      replyTo: mail.replyTo,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      messageId: mail.messageId,
      attachments: mail.attachments,
    });
  }

  close(): void {
    this.transport.close();
  }
}

class DirTransport implements MailTransport {
  readonly describe: string;

  constructor(private readonly dir: string) {
    this.describe = `dir://${dir}`;
  }

  async send(mail: OutgoingMail): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    // Written under a temporary name, then renamed: a reader never sees half a mail.
    const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.json`;
    const tmp = join(this.dir, `.${name}.tmp`);
    await writeFile(tmp, JSON.stringify(mail, null, 2), { mode: 0o600 });
    await rename(tmp, join(this.dir, name));
  }

  close(): void {}
}
