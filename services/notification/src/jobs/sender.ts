import { PeriodicTask, type Clock, type Logger, type MailTransport, type Metrics } from '@licensing/runtime';
import { displayName } from '../domain/purchase-mail';
import { nextMailStep } from '../domain/retry';
import type { EmailDoc } from '../store/emails';
import type { NotificationDeps } from '../use-cases/deps';
import { renderPortalMail } from '../use-cases/render-portal';
import { renderPurchase, type PurchaseMail } from '../use-cases/render-purchase';

export interface SenderSettings {
  intervalMs: number;
  /** One SMTP exchange's limit (MAIL_SEND_TIMEOUT_MS). */
  timeoutMs: number;
  scheduleS: number[];
  fromAddress: string;
}

/** Mail taken per pass. */
const PASS_SIZE = 20;

/** How long a taken mail is left to its sender: the exchange's limit plus room to look things up and record the result. */
const claimMsFor = (timeoutMs: number) => timeoutMs * 2 + 10_000;

/**
 * A send that has not finished within its limit is a failed attempt, whatever the transport's own
 * timeouts do (a server that takes the DATA and never answers): a graceful stop never waits longer.
 */
function withinMs<T>(ms: number, message: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Errors of an SMTP server may name hosts and users: the log keeps a short, single-line message. */
const shortError = (err: unknown): string =>
  String((err as Error)?.message ?? err)
    .replace(/\s+/g, ' ')
    .slice(0, 300);

/**
 * Sends queued mail that is due. The queue lives in the store (status queued,
 * next_attempt_at), so a restart loses nothing: each mail is taken (claimed)
 * before it is sent, and its result is recorded after. A graceful stop waits for
 * the mail being sent; a process killed mid-send leaves its mail claimed until
 * the claim runs out, and it is then sent again: at most once more.
 */
export class Sender {
  private readonly outcomes;
  private readonly inFlight = new Set<Promise<void>>();
  private task?: PeriodicTask;

  constructor(
    private readonly deps: NotificationDeps,
    private readonly transport: MailTransport | undefined,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly settings: SenderSettings,
    metrics: Metrics,
  ) {
    this.outcomes = metrics.counter('licensing_emails_total', ['outcome']);
  }

  /** One pass: takes what is due and sends it (a few at a time). */
  async pass(): Promise<number> {
    if (!this.transport) return 0;
    const now = this.clock.now();
    const due = await this.deps.emails.due(now, PASS_SIZE);
    for (const mail of due) {
      const until = new Date(now.getTime() + claimMsFor(this.settings.timeoutMs));
      if (!(await this.deps.emails.claim(mail._id, now, until))) continue;
      const p = this.attempt(mail).catch((err) =>
        this.log.warn({ err, email: mail._id }, 'could not record a mail attempt; it is tried again later'),
      );
      this.inFlight.add(p);
      void p.finally(() => this.inFlight.delete(p));
      await p;
    }
    return due.length;
  }

  /** What to send, from what the owning services say now; null: nothing (a portal request dropped). */
  private render(mail: EmailDoc): Promise<PurchaseMail | null> {
    return mail.template === 'purchase' ? renderPurchase(this.deps, mail) : renderPortalMail(this.deps, mail);
  }

  private async attempt(mail: EmailDoc): Promise<void> {
    const attempts = mail.attempts + 1;
    let subject = mail.subject;
    try {
      const rendered = await this.render(mail);
      if (!rendered) {
        // Never logged, in the mail log or here: it would tell who is not a customer.
        await this.deps.emails.remove(mail._id);
        this.outcomes.inc({ outcome: 'dropped' });
        return;
      }
      subject = rendered.subject;
      await withinMs(
        this.settings.timeoutMs,
        'the SMTP server did not answer in time',
        this.transport!.send({
          from: { name: displayName(rendered.vendorName) || 'Licensing', address: this.settings.fromAddress },
          replyTo: rendered.supportEmail || undefined,
          to: mail.to,
          subject: rendered.subject,
          text: rendered.text,
          html: rendered.html,
          attachments: rendered.attachments,
          messageId: `<${mail._id}@${this.settings.fromAddress.split('@')[1] || 'localhost'}>`,
        }),
      );
    } catch (err) {
      const step = nextMailStep(attempts, this.clock.now(), this.settings.scheduleS);
      this.outcomes.inc({ outcome: step.kind });
      this.log.warn({ email: mail._id, attempts, err: shortError(err) }, 'a mail could not be sent');
      await this.deps.emails.update(mail._id, {
        attempts,
        subject,
        last_error: shortError(err),
        ...(step.kind === 'retry' ? { next_attempt_at: step.at } : { status: 'failed', next_attempt_at: null }),
      });
      return;
    }
    this.outcomes.inc({ outcome: 'sent' });
    await this.deps.emails.update(mail._id, {
      attempts,
      subject,
      status: 'sent',
      next_attempt_at: null,
      sent_at: this.clock.now(),
    });
  }

  start(): void {
    // A full pass (a backlog) is followed at once, not an interval later.
    let full = false;
    const pass = async () => {
      full = (await this.pass()) >= PASS_SIZE;
    };
    this.task = new PeriodicTask('mail sender', pass, () => (full ? 0 : this.settings.intervalMs), this.log);
    this.task.start();
    // Mail queued here goes out at once; the interval is only the look for retries and other instances' mail.
    this.deps.emails.onQueued = () => this.task?.soon(0);
  }

  /** Stops taking mail, and waits for the one being sent (its result is recorded). */
  async stop(): Promise<void> {
    await this.task?.stop();
    await Promise.all([...this.inFlight]);
  }
}
