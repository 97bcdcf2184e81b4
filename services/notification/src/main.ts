import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import {
  AccountServiceClient,
  LicenseServiceClient,
  NotificationServiceService,
  ProductServiceClient,
} from '@licensing/proto';
import {
  AppError,
  createClient,
  internalCredential,
  mailTransportFor,
  runMain,
  startService,
  type ServiceContext,
  type ServiceRecipe,
  type StartOptions,
} from '@licensing/runtime';
import { notificationAccess } from './access';
import { notificationSchema, type NotificationConfig } from './config';
import { parseSchedule, sendTimeoutWithin } from './domain/retry';
import { BatchMailRequests, LicenseMailRequests, MailRequests, type LicenseMailEvent } from './events/mail-requests';
import { emailHandlers } from './handlers/email-handlers';
import { portalCleanup } from './jobs/portal-cleanup';
import { Sender } from './jobs/sender';
import { EmailClaimStore, emailClaimModel } from './store/email-claims';
import { EmailStore, emailModel } from './store/emails';
import { MailCountStore, mailCountModel } from './store/mail-quota';
import { MailAdmission } from './use-cases/mail-admission';
import { PortalStore, portalModels } from './store/portal';
import type { NotificationDeps } from './use-cases/deps';

/**
 * The sender's identity in its claims: no two live processes share a host and a bound port, and the
 * same process started again after a crash has it again (so it releases what it held). With a port
 * the system chooses, a random one: its claims then simply run out.
 */
export const senderInstance = (host: string, port: number): string =>
  `${hostname()}/${host}:${port || `any-${randomBytes(6).toString('hex')}`}`;

type NotificationContext = ServiceContext<NotificationConfig>;

/** The SMTP transport (none: customer mail stays queued), with a send timeout that fits in a graceful stop. */
function mailTransportOf(ctx: NotificationContext) {
  // A graceful stop waits for the mail being sent: its limit fits in the stop's (domain/retry.ts).
  const send = sendTimeoutWithin(ctx.config.MAIL_SEND_TIMEOUT_MS, ctx.config.SHUTDOWN_TIMEOUT_MS);
  if (send.clamped)
    ctx.log.warn(
      { MAIL_SEND_TIMEOUT_MS: ctx.config.MAIL_SEND_TIMEOUT_MS, SHUTDOWN_TIMEOUT_MS: ctx.config.SHUTDOWN_TIMEOUT_MS },
      'MAIL_SEND_TIMEOUT_MS is longer than SHUTDOWN_TIMEOUT_MS: sends are limited to SHUTDOWN_TIMEOUT_MS, so a stop can wait for one',
    );
  const timeoutMs = send.ms;
  const transport = mailTransportFor(ctx.config.MAIL_URL, {
    connectMs: Math.min(timeoutMs, 10_000),
    socketMs: timeoutMs,
  });
  ctx.log.info({ mail: transport?.describe ?? 'none: customer mail stays queued' }, 'customer mail');
  return { transport, timeoutMs };
}

/**
 * What asks for customer mail, in the order they start and stop: purchases (when the product mails on
 * purchase), the send_email items of licence batches, and the licence mail an API call asked for.
 */
function mailRequestConsumers(
  ctx: NotificationContext,
  emails: EmailStore,
  products: NotificationDeps['products'],
  licenses: NotificationDeps['licenses'],
) {
  const wanted = async (accountId: string, productId: string) => {
    try {
      const product = await products.getProduct({ account_id: accountId, id: productId });
      return product.email_on_purchase !== false;
    } catch (err) {
      if (err instanceof AppError && err.code === 'not_found') return false;
      throw err;
    }
  };
  const requests = new MailRequests(ctx.bus, ctx.config.EVENTS_STREAM, emails, wanted, ctx.clock, ctx.log, ctx.tracing);
  // The send_email items of licence batches, when license.batch_completed says a batch is done.
  const batchRequests = new BatchMailRequests(
    ctx.bus,
    ctx.config.EVENTS_STREAM,
    emails,
    licenses.getLicenseBatch,
    ctx.clock,
    ctx.log,
    ctx.tracing,
  );
  // The licence mail an API call asked for (send_email), on license.created and license.rerolled.
  const licenseRequests = (['license.created', 'license.rerolled'] as LicenseMailEvent[]).map(
    (type) => new LicenseMailRequests(type, ctx.bus, ctx.config.EVENTS_STREAM, emails, ctx.clock, ctx.log, ctx.tracing),
  );
  return [requests, batchRequests, ...licenseRequests];
}

export const notificationService: ServiceRecipe<typeof notificationSchema> = {
  name: 'notification',
  schema: notificationSchema,
  async setup(ctx) {
    const scheduleS = parseSchedule(ctx.config.MAIL_RETRY_SCHEDULE_S);
    const credential = internalCredential('notification', ctx.config, ctx.tracing);
    const accounts = createClient(AccountServiceClient, ctx.config.ACCOUNT_GRPC_ADDR, credential);
    // Every mail is judged by its account's mail quota (by plan) as it is stored.
    const admission = new MailAdmission(
      new MailCountStore(mailCountModel(ctx.db)),
      async (id) => (await accounts.call.getAccount({ id })).plan,
    );
    const emails = new EmailStore(emailModel(ctx.db), new EmailClaimStore(emailClaimModel(ctx.db)), admission);
    const products = createClient(ProductServiceClient, ctx.config.PRODUCT_GRPC_ADDR, credential);
    const licenses = createClient(LicenseServiceClient, ctx.config.LICENSE_GRPC_ADDR, credential);
    const portal = new PortalStore(portalModels(ctx.db));
    const deps: NotificationDeps = {
      emails,
      portal,
      clock: ctx.clock,
      accounts: accounts.call,
      products: products.call,
      licenses: licenses.call,
      publicBaseUrl: ctx.config.PUBLIC_BASE_URL.replace(/\/+$/, ''),
      signInMailsPerHour: ctx.config.PORTAL_SIGNINS_PER_EMAIL,
    };
    const { transport, timeoutMs } = mailTransportOf(ctx);
    ctx.grpc.add(NotificationServiceService, emailHandlers(deps), notificationAccess);
    const consumers = mailRequestConsumers(ctx, emails, products.call, licenses.call);
    const sender = new Sender(
      deps,
      transport,
      ctx.clock,
      ctx.log,
      {
        intervalMs: ctx.config.MAIL_SEND_INTERVAL_MS,
        timeoutMs,
        scheduleS,
        maxAgeS: ctx.config.MAIL_MAX_AGE_S,
        fromAddress: ctx.config.MAIL_FROM_ADDRESS,
        instance: senderInstance(ctx.config.GRPC_HOST, ctx.config.GRPC_PORT),
        concurrency: ctx.config.MAIL_SEND_CONCURRENCY,
      },
      ctx.metrics,
    );
    const cleanup = portalCleanup(portal, ctx.clock, ctx.log, ctx.config.PORTAL_CLEANUP_INTERVAL_MS, [
      (now) => emails.deleteEndedClaims(now),
      (now) => admission.deleteEnded(now),
    ]);
    for (const consumer of consumers) await consumer.start();
    await sender.start();
    // The moment a stop begins (before the gRPC calls in flight are waited for), no more mail is taken.
    ctx.stopping.addEventListener('abort', () => sender.beginStop(), { once: true });
    cleanup.start();
    return async () => {
      for (const consumer of consumers) await consumer.stop();
      await sender.stop();
      await cleanup.stop();
      transport?.close();
      for (const c of [accounts, products, licenses]) c.close();
    };
  },
};

export const start = (opts?: StartOptions<NotificationConfig>) => startService(notificationService, opts);

if (require.main === module) runMain('notification-service', () => start());
