import { AccountServiceService } from '@licensing/proto';
import { resealField, runMain, startService, type ServiceRecipe, type StartOptions } from '@licensing/runtime';
import { accountSchema, type AccountConfig } from './config';
import { accountHandlers } from './handlers/account-handlers';
import { peopleHandlers } from './handlers/people-handlers';
import { mfaKeyring } from './domain/mfa-keyring';
import { resetMfaJob } from './jobs/reset-mfa';
import { inviteOwner } from './use-cases/members';
import { mailerFor } from './mail/mailer';
import { accountModels } from './store/models';
import { AccountStore, PeopleStore } from './store/queries';
import { accountAccess } from './access';
import { parsePeppers } from './domain/api-key';
import { keySlotsMigration } from './jobs/key-slots';
import { pepperIdMigration, pepperUsage } from './jobs/pepper';
import { requestKeyHandlers } from './handlers/request-key-handlers';
import { RequestKeyStore, requestKeyModels } from './store/request-keys';
import { AuditStore, auditModel } from './store/audit';
import { AuditRecorder } from './events/audit-recorder';
import { auditRetention } from './jobs/audit-retention';
import { listAuditEvents } from './use-cases/audit';
import { MemberStore, memberModel } from './store/members';
import { memberHandlers } from './handlers/member-handlers';
import { ownerMembersMigration } from './jobs/owner-members';

export const accountService: ServiceRecipe<typeof accountSchema> = {
  name: 'account',
  schema: accountSchema,
  async setup(ctx) {
    const models = accountModels(ctx.db);
    const store = new AccountStore(models);
    const audit = new AuditStore(auditModel(ctx.db));
    ctx.outbox.track(models.ApiKey);
    ctx.outbox.track(models.Account);
    ctx.outbox.track(models.User);
    const mailer = mailerFor(ctx.config.MAIL_URL, ctx.config.MAIL_FROM);
    const members = new MemberStore(memberModel(ctx.db));
    ctx.outbox.track(members.Member);
    const people = {
      accounts: store,
      people: new PeopleStore(models),
      members,
      mailer,
      clock: ctx.clock,
      baseUrl: ctx.config.PUBLIC_BASE_URL.replace(/\/+$/, ''),
      log: ctx.log,
      outbox: ctx.outbox,
      mfaKeyring: mfaKeyring(parsePeppers(ctx.config.API_KEY_PEPPER)),
    };
    ctx.log.info({ mail: mailer?.describe ?? 'none: dashboard sign-up is closed' }, 'sign-up mail');
    ctx.grpc.add(
      AccountServiceService,
      {
        ...accountHandlers(
          {
            store,
            outbox: ctx.outbox,
            clock: ctx.clock,
            pepper: parsePeppers(ctx.config.API_KEY_PEPPER),
            log: ctx.log,
          },
          { mails: !!mailer, invite: (accountId, email) => inviteOwner(people, accountId, email) },
        ),
        ...peopleHandlers(people),
        ...memberHandlers(people),
        ...requestKeyHandlers({ keys: new RequestKeyStore(requestKeyModels(ctx.db)), clock: ctx.clock }),
        listAuditEvents: (req) => listAuditEvents(audit, req),
      },
      accountAccess,
    );
    const recorder = new AuditRecorder(ctx.bus, ctx.config.EVENTS_STREAM, audit, (ids) => store.keyNames(ids), ctx.log);
    await recorder.start();
    const retention = auditRetention(
      audit,
      ctx.clock,
      { days: ctx.config.AUDIT_RETENTION_DAYS, intervalMs: ctx.config.AUDIT_RETENTION_INTERVAL_MS },
      ctx.log,
    );
    retention.start();
    return async () => {
      await recorder.stop();
      await retention.stop();
    };
  },
  migrations: [pepperIdMigration, keySlotsMigration, ownerMembersMigration],
  jobs: {
    // `npm run admin -- pepper-usage --service account`: live keys per API_KEY_PEPPER version.
    async 'pepper-usage'(ctx) {
      const peppers = parsePeppers(ctx.config.API_KEY_PEPPER);
      return {
        current: peppers.current.id,
        configured: peppers.all.map((p) => p.id),
        live_keys: await pepperUsage(ctx.db),
      };
    },
    // `npm run admin -- reseal --service account`: moves every TOTP secret to API_KEY_PEPPER's current
    // version, before an old pepper is dropped (which would leave them unreadable).
    async reseal(ctx) {
      const keyring = mfaKeyring(parsePeppers(ctx.config.API_KEY_PEPPER));
      const report = await resealField({
        model: accountModels(ctx.db).User,
        path: 'mfa.secret',
        keyring,
        progress: ctx.progress,
      });
      return { key_id: keyring.currentId, ...report };
    },
    // `npm run admin -- reset-mfa --service account --email …`: the way back in for someone who lost
    // their phone and every recovery code (the owner, whom no admin may reset).
    'reset-mfa': (ctx) => resetMfaJob(new PeopleStore(accountModels(ctx.db)), ctx.clock, ctx.args.email ?? ''),
  },
};

export const start = (opts?: StartOptions<AccountConfig>) => startService(accountService, opts);

if (require.main === module) runMain('account-service', () => start());
