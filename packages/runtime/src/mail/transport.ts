import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createTransport } from 'nodemailer';

/** One e-mail as nodemailer takes it: plain text, or multipart with HTML and attachments. */
export interface MailMessage {
  /** The configured sender when absent (SMTP); "Name" <address> as an object for a display name. */
  from?: string | { name: string; address: string };
  replyTo?: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
  attachments?: { filename: string; content: string; contentType: string }[];
  messageId?: string;
}

export interface MailTransport {
  send(message: MailMessage): Promise<void>;
  /** Where mail goes, for the start-up log (never with credentials). */
  readonly describe: string;
  close(): void;
}

export interface MailTransportOptions {
  /** The sender of messages that name none. */
  from?: string;
  /** Connecting and the server's greeting, each. */
  connectMs: number;
  /** Silence on the socket once connected. */
  socketMs: number;
}

/**
 * MAIL_URL chooses the transport, for sign-up mail (account service) and customer mail (notification
 * service) alike:
 * - `smtp://<user>:<password>@host:587` or `smtps://…:465`: a real mail server (production);
 * - `dir:///path/to/folder`: each mail is written there as a JSON file (development and tests:
 *   `npm start` uses .data/mail, and a test reads the link from it);
 * - empty: no transport (undefined); what that means is the caller's.
 */
export function mailTransportFor(url: string, opts: MailTransportOptions): MailTransport | undefined {
  if (!url) return undefined;
  if (url.startsWith('dir://')) return new DirTransport(new URL(url).pathname);
  if (/^smtps?:\/\//.test(url)) return new SmtpTransport(url, opts);
  throw new Error('MAIL_URL must start with smtp://, smtps:// or dir://');
}

class SmtpTransport implements MailTransport {
  private readonly transport;
  readonly describe: string;

  constructor(
    url: string,
    private readonly opts: MailTransportOptions,
  ) {
    this.transport = createTransport(url, {
      connectionTimeout: opts.connectMs,
      greetingTimeout: opts.connectMs,
      socketTimeout: opts.socketMs,
    });
    const u = new URL(url);
    this.describe = `${u.protocol}//${u.host}`;
  }

  async send(message: MailMessage): Promise<void> {
    await this.transport.sendMail({ ...message, from: message.from ?? this.opts.from });
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

  async send(message: MailMessage): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    // Written under a temporary name, then renamed: a reader never sees half a mail.
    const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.json`;
    const tmp = join(this.dir, `.${name}.tmp`);
    await writeFile(tmp, JSON.stringify(message, null, 2), { mode: 0o600 });
    await rename(tmp, join(this.dir, name));
  }

  close(): void {}
}
