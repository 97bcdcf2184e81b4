import { SMTPServer } from 'smtp-server';
import { freePort } from '../../scripts/lib/net';
import { eventually } from './eventually';

/** One MIME part of a received mail, decoded. */
export interface MailPart {
  contentType: string;
  filename?: string;
  body: string;
}

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  headers: Record<string, string>;
  parts: MailPart[];
}

function decode(body: string, encoding: string): string {
  const e = encoding.toLowerCase();
  if (e === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (e === 'quoted-printable')
    return Buffer.from(
      body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
      'latin1',
    ).toString('utf8');
  return body;
}

function headersOf(block: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) out[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  return out;
}

/** The leaf parts of a MIME entity (enough of MIME for nodemailer's output: multipart, base64, quoted-printable). */
function partsOf(entity: string): MailPart[] {
  const split = entity.search(/\r?\n\r?\n/);
  const headers = headersOf(entity.slice(0, split));
  const body = entity.slice(split).replace(/^\r?\n\r?\n/, '');
  const type = headers['content-type'] ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (type.startsWith('multipart/') && boundary)
    return body
      .split(`--${boundary}`)
      .slice(1)
      .filter((p) => !p.startsWith('--'))
      .flatMap((p) => partsOf(p.replace(/^\r?\n/, '')));
  const filename = /filename="?([^";]+)"?/i.exec(headers['content-disposition'] ?? '')?.[1];
  return [
    {
      contentType: type.split(';')[0].trim(),
      filename,
      body: decode(body, headers['content-transfer-encoding'] ?? '7bit'),
    },
  ];
}

/**
 * A real SMTP server (smtp-server) that keeps what it receives. `down` makes it refuse every mail
 * with 451 (a server that is out), `hold` keeps the DATA of a mail unanswered until release().
 */
export class SmtpInbox {
  readonly received: ReceivedMail[] = [];
  down = false;
  private holding = false;
  private readonly held: (() => void)[] = [];
  /** Mails whose DATA arrived while holding (answered or not). */
  heldCount = 0;

  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
  ) {}

  static async start(): Promise<SmtpInbox> {
    const port = await freePort();
    let inbox: SmtpInbox | undefined;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onMailFrom(_address, _session, cb) {
        if (inbox!.down) return cb(Object.assign(new Error('Service not available, try later'), { responseCode: 451 }));
        cb();
      },
      onData(stream, session, done) {
        let raw = '';
        stream.on('data', (c: Buffer) => (raw += c.toString('utf8')));
        stream.on('end', () => {
          if (inbox!.holding) {
            // Never answered: the sender gives up at its socket timeout, as with a server that hangs.
            inbox!.heldCount++;
            inbox!.held.push(() => done(Object.assign(new Error('aborted'), { responseCode: 451 })));
            return;
          }
          const split = raw.search(/\r?\n\r?\n/);
          inbox!.received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw,
            headers: headersOf(raw.slice(0, split)),
            parts: partsOf(raw),
          });
          done();
        });
      },
    });
    inbox = new SmtpInbox(server, port);
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return inbox;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  hold(): void {
    this.holding = true;
  }

  release(): void {
    this.holding = false;
    for (const answer of this.held.splice(0)) answer();
  }

  to(address: string): ReceivedMail[] {
    return this.received.filter((m) => m.to.includes(address));
  }

  /** Waits for the `n`th mail to `address` (polling) and gives it. */
  mailTo(address: string, n = 1, wait = { timeoutMs: 20_000, intervalMs: 50 }): Promise<ReceivedMail> {
    return eventually(() => {
      const got = this.to(address);
      if (got.length < n) throw new Error(`${got.length} of ${n} mails to ${address} so far`);
      return got[n - 1];
    }, wait);
  }

  async stop(): Promise<void> {
    this.release();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
