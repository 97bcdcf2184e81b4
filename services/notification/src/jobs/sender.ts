import { PeriodicTask, type Clock, type Logger, type MailTransport, type Metrics } from '@licensing/runtime';
import { displayName } from '../domain/purchase-mail';
import { nextMailStep, type MailStep } from '../domain/retry';
import { NEEDS_CONFIRMED_RECIPIENT, type EmailDoc } from '../store/emails';
import type { NotificationDeps } from '../use-cases/deps';
import { renderPortalMail } from '../use-cases/render-portal';
import { renderPurchase, Undeliverable, type PurchaseMail } from '../use-cases/render-purchase';

export interface SenderSettings {
  intervalMs: number;
  /** One attempt's limit, the look-ups and the SMTP exchange each (MAIL_SEND_TIMEOUT_MS, at most SHUTDOWN_TIMEOUT_MS). */
  timeoutMs: number;
  scheduleS: number[];
  /** MAIL_MAX_AGE_S: a mail not sent this long after it was asked is failed. */
  maxAgeS: number;
  fromAddress: string;
  /**
   * Who this sender is in the claims it writes: host and gRPC port, which no other live process has
   * (a random one when the port is chosen by the system). Its claims left by a killed process are
   * released when it starts again.
   */
  instance: string;
  /** MAIL_SEND_CONCURRENCY: mails in flight at once (each its own look-ups and SMTP exchange). */
  concurrency: number;
}

/** Mail taken per pass (the next pass follows at once when it was full, and takes the lowest turns again). */
export const PASS_SIZE = 20;
/** Deferred mail looked at per pass, to queue what its account's quota now admits. */
export const DEFERRED_PASS_SIZE = 200;

/** How long a taken mail is left to its sender: the look-ups' and the exchange's limits plus room to record the result. */
export const claimMsFor = (timeoutMs: number) => timeoutMs * 2 + 10_000;

class TimedOut extends Error {}

/**
 * Work that has not finished within its limit is a failed attempt, whatever the transport's own
 * timeouts do (a server that takes the DATA and never answers): a graceful stop never waits longer.
 */
function withinMs<T>(ms: number, message: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    // Only a limit: it keeps no process alive on its own.
    timer = setTimeout(() => reject(new TimedOut(message)), ms).unref();
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Errors of an SMTP server may name hosts and users: the log keeps a short, single-line message. */
const shortError = (err: unknown): string =>
  String((err as Error)?.message ?? err)
    .replace(/\s+/g, ' ')
    .slice(0, 300);

const STOPPED = Symbol('stopped');

/** Whether the mail may show in the vendor's log (a sign-in request only once its address was confirmed). */
const isConfirmed = (mail: EmailDoc) =>
  !NEEDS_CONFIRMED_RECIPIENT.includes(mail.template) || mail.recipient_confirmed === true;

/**
 * Sends queued mail that is due. The queue lives in the store (status queued,
 * next_attempt_at), so a restart loses nothing: each mail is taken (claimed)
 * before it is sent, and its result is recorded after.
 *
 * A graceful stop (stop(), or beginStop() the moment the process is told to stop) takes no
 * further mail at once: the pass in progress ends after the mails in hand. A mail whose
 * look-ups are still running is given back unsent (due again at once, for another
 * instance or the next start); one whose SMTP exchange has begun is waited for, at most
 * timeoutMs, and its result recorded. A process killed mid-send leaves its mail claimed:
 * the same instance starting again releases it at once, any other instance takes it
 * when the claim runs out; it may then go out once more (the same Message-ID).
 */
export class Sender {
  private readonly outcomes;
  private readonly inFlight = new Set<Promise<void>>();
  private task?: PeriodicTask;
  private stopping = false;
  /** Told when a stop begins: the attempts waiting on their look-ups (each removes its own when done). */
  private readonly onStop = new Set<() => void>();

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

  /** What to send, or STOPPED if a stop begins first (the look-ups then go on unawaited, their result unused). */
  private async renderUnlessStopped(mail: EmailDoc): Promise<PurchaseMail | null | typeof STOPPED> {
    const rendering = withinMs(
      this.settings.timeoutMs,
      'the services a mail is made from did not answer in time',
      this.render(mail),
    );
    rendering.catch(() => undefined);
    let stopped: (() => void) | undefined;
    const stop = new Promise<typeof STOPPED>((resolve) => {
      stopped = () => resolve(STOPPED);
      this.onStop.add(stopped);
    });
    try {
      return await Promise.race([rendering, stop]);
    } finally {
      this.onStop.delete(stopped!);
    }
  }

  /**
   * One pass: queues the deferred mail its account's quota now admits, then takes what is due, lowest
   * turn first (a round-robin by account), and sends it with at most `concurrency` mails in flight,
   * until a stop.
   */
  async pass(): Promise<number> {
    if (!this.transport || this.stopping) return 0;
    await this.admitDeferred();
    const due = await this.deps.emails.due(this.clock.now(), PASS_SIZE);
    let next = 0;
    const lane = async () => {
      while (next < due.length && !this.stopping) await this.takeAndSend(due[next++]);
    };
    await Promise.all(Array.from({ length: Math.min(Math.max(1, this.settings.concurrency), due.length) }, lane));
    return due.length;
  }

  /** Claims one due mail and makes its attempt, from the mail as claimed (nothing if another sender claimed it first). */
  private async takeAndSend(due: EmailDoc): Promise<void> {
    const now = this.clock.now();
    const until = new Date(now.getTime() + claimMsFor(this.settings.timeoutMs));
    const mail = await this.deps.emails.claim(due._id, now, until, this.settings.instance);
    if (!mail) return;
    const p = this.attempt(mail, until).catch((err) =>
      this.log.warn({ err, email: mail._id }, 'could not record a mail attempt; it is tried again later'),
    );
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
    await p;
  }

  /**
   * Deferred mail whose window has ended: queued if its account's quota has room now, oldest asked
   * first; an account still over it has its due deferred mail moved to the end of the refusing window
   * (one write), so it is not looked at again before then.
   */
  private async admitDeferred(): Promise<void> {
    const admission = this.deps.emails.admission;
    if (!admission) return;
    const now = this.clock.now();
    const waiting = await this.deps.emails.deferredDue(now, DEFERRED_PASS_SIZE);
    const refused = new Set<string>();
    for (const mail of waiting) {
      if (this.stopping) return;
      if (refused.has(mail.account_id)) continue;
      const verdict = await admission.admit(mail.account_id, now);
      if (verdict.status === 'queued') {
        await this.deps.emails.admitDeferred(mail._id, verdict.turn, now);
        continue;
      }
      refused.add(mail.account_id);
      await this.deps.emails.postponeDeferred(mail.account_id, now, verdict.until);
    }
  }

  /** What to send, from what the owning services say now; null: nothing (a portal request dropped). */
  private render(mail: EmailDoc): Promise<PurchaseMail | null> {
    return mail.template === 'purchase' ? renderPurchase(this.deps, mail) : renderPortalMail(this.deps, mail);
  }

  private async attempt(mail: EmailDoc, until: Date): Promise<void> {
    const attempts = mail.attempts + 1;
    let subject = mail.subject;
    try {
      // A stop while the owning services are asked gives the mail back: nothing has gone out yet.
      const rendered = await this.renderUnlessStopped(mail);
      if (rendered === STOPPED || this.stopping) {
        await this.deps.emails.release(mail._id, until, this.clock.now());
        this.outcomes.inc({ outcome: 'released' });
        return;
      }
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
      await this.failed(mail, attempts, subject, err);
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

  /** A failed attempt: tried again by the schedule, failed for good when it cannot or may not go out. */
  private async failed(mail: EmailDoc, attempts: number, subject: string, err: unknown): Promise<void> {
    const now = this.clock.now();
    const step: MailStep =
      err instanceof Undeliverable
        ? { kind: 'failed', reason: err.message }
        : nextMailStep(
            attempts,
            now,
            this.settings.scheduleS,
            mail.queued_at ?? mail.created_at,
            this.settings.maxAgeS,
          );
    // Only the mail's id: its address is not for the log.
    this.log.warn({ email: mail._id, attempts, err: shortError(err) }, 'a mail could not be sent');
    // Still unconfirmed (a sign-in whose address was never checked): given up, it leaves no trace at all.
    if (step.kind === 'failed' && !isConfirmed(mail)) {
      await this.deps.emails.remove(mail._id);
      this.outcomes.inc({ outcome: 'dropped' });
      return;
    }
    this.outcomes.inc({ outcome: step.kind });
    await this.deps.emails.update(mail._id, {
      attempts,
      subject,
      ...(step.kind === 'retry'
        ? { next_attempt_at: step.at, last_error: shortError(err) }
        : {
            status: 'failed',
            next_attempt_at: null,
            last_error:
              err instanceof Undeliverable ? step.reason : `${step.reason}; the last error: ${shortError(err)}`,
            ...(err instanceof Undeliverable && err.to ? { to: err.to } : {}),
          }),
    });
  }

  async start(): Promise<void> {
    // This instance's claims from a process that was killed mid-send: due again now, not when they run out.
    if (this.transport) {
      const released = await this.deps.emails.releaseAllOf(this.settings.instance, this.clock.now());
      if (released) this.log.info({ released }, 'mail this instance had taken when it was last stopped is due again');
    }
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

  /** Takes no more mail from now on (the mail in hand is finished or given back): the moment a stop begins. */
  beginStop(): void {
    if (this.stopping) return;
    this.stopping = true;
    for (const stopped of this.onStop) stopped();
    void this.task?.stop();
  }

  /** Stops taking mail, and waits for the one being sent (its result is recorded) or given back. */
  async stop(): Promise<void> {
    this.beginStop();
    await this.task?.stop();
    await Promise.all([...this.inFlight]);
  }
}
