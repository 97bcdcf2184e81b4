import type { PolicySnapshot } from '@licensing/proto';
import { accountModels } from '../../services/account/src/store/models';
import { AccountStore, PeopleStore } from '../../services/account/src/store/queries';
import { RequestKeyStore, requestKeyModels } from '../../services/account/src/store/request-keys';
import { newLicense } from '../../services/license/src/domain/new-license';
import { BulkLicenses } from '../../services/license/src/store/bulk-licenses';
import {
  type ExportDoc,
  type ImportDoc,
  ImportStore,
  importModels,
} from '../../services/license/src/transfer/store/imports';
import { licenseModels } from '../../services/license/src/store/models';
import { LicenseStore } from '../../services/license/src/store/queries';
import { statsModels, ValidationStatsStore } from '../../services/license/src/store/stats';
import { EmailStore, emailModel, queuedMail } from '../../services/notification/src/store/emails';
import { EmailClaimStore, emailClaimModel } from '../../services/notification/src/store/email-claims';
import { MailCountStore, mailCountModel } from '../../services/notification/src/store/mail-quota';
import { PortalStore, portalModels } from '../../services/notification/src/store/portal';
import { DeliveryStore, deliveryModel } from '../../services/webhook/src/store/deliveries';
import { checkoutModels } from '../../services/checkout/src/store/models';
import { CheckoutStore } from '../../services/checkout/src/store/queries';
import { type Sent, SIZE, StoreAtSize } from '../support/query-plans';

// Every query the stores send to a collection that grows with the data (licences, activations, machine
// sightings, validation telemetry, imports, exports and their files, mail and its claims and quota
// counts, portal and checkout tokens, webhook deliveries, API keys, sessions, sign-ups, idempotency
// keys) is served by an index on the default store, FerretDB over PostgreSQL, with 100,000 documents in
// the collection: each store method runs against the collection at that size, and each command it sent
// to FerretDB (and each statement it sent to PostgreSQL itself) is explained. A plan that reads every
// document fails, naming the method and the filter. (MongoDB's side is the index-coverage check of
// npm test.) Every service's collections are seeded in one database, so the load, the index builds and
// the planner statistics are done once for all of them.

const postgresUrl = process.env.TEST_FERRETDB_POSTGRESQL_URL;
// Over SQLite (TEST_STORE=sqlite) there is no PostgreSQL plan to read: the default store is PostgreSQL.
const overPostgres = postgresUrl ? describe : describe.skip;

jest.setTimeout(120_000);

const now = new Date();
const hourAgo = new Date(now.getTime() - 3_600_000);
const expires = new Date(now.getTime() + 3_600_000);
const policy: PolicySnapshot = {
  duration_days: 365,
  max_activations: 3,
  grace_days: 7,
  require_activation: false,
  validate_keys_see_email: false,
} as PolicySnapshot;

/** The plans of one method's commands that read the whole collection, as readable lines. */
const readingAll = (name: string, sent: Sent[]) =>
  sent.filter((s) => s.readsAll).map((s) => `${name}: ${s.collection} ${s.what} — ${s.readsAll}`);

async function check(store: StoreAtSize, cases: Record<string, () => Promise<unknown>>): Promise<string[]> {
  const bad: string[] = [];
  for (const [name, work] of Object.entries(cases)) {
    const sent = await store.plansOf(work);
    if (!sent.length) bad.push(`${name}: sent nothing to a seeded collection (the case tests nothing)`);
    bad.push(...readingAll(name, sent));
  }
  return bad;
}

// The template documents: one per collection, the one each case asks about (the clones differ from it).

const lic = newLicense('acct_plan', 'prod_plan', 'buyer@example.com', policy, now);
const activation = {
  _id: 'act_plan',
  license_id: lic._id,
  account_id: 'acct_plan',
  fingerprint: 'fp-plan',
  name: 'Laptop',
  slot_key: '1',
  fingerprint_key: 'fp-plan',
  created_at: now,
  deactivated_at: null,
  lease_expires_at: new Date(now.getTime() + 60_000),
  reclaim_bucket: '2026-01-01T00',
  last_seen_at: now,
};
const importDoc: ImportDoc = {
  _id: 'imp_plan',
  account_id: 'acct_plan',
  format: 'csv' as ImportDoc['format'],
  state: 'running',
  chunks: 1,
  bytes: 10,
  total: -1,
  checkpoint_row: 0,
  imported: 0,
  skipped: 0,
  rejected: 0,
  row_errors: [],
  failure: '',
  epoch: 1,
  lease_until: hourAgo,
  created_at: now,
  updated_at: now,
  finished_at: null,
};
const exportDoc: ExportDoc = {
  _id: 'exp_plan',
  account_id: 'acct_plan',
  state: 'done',
  chunks: 1,
  bytes: 10,
  counts: {},
  failure: '',
  lease_until: null,
  created_at: now,
  updated_at: now,
  finished_at: now,
  expires_at: expires,
};
const mail = {
  ...queuedMail(
    'purchase',
    {
      _id: 'eml_plan',
      request_key: 'req_plan',
      account_id: 'acct_plan',
      to: 'buyer@example.com',
      license_key: 'KEY-PLAN',
    },
    now,
  ),
  turn: 1,
  queued_at: now,
};
const link = {
  _id: 'eml_link',
  token_digest: 'digest_plan',
  account_id: 'acct_plan',
  email: 'buyer@example.com',
  license_key: '',
  expires_at: expires,
  created_at: now,
};
const portalSession = { ...link, _id: 'session_digest', csrf_token: 'csrf', token_digest: undefined };
const delivery = {
  _id: 'dlv_plan',
  account_id: 'acct_plan',
  endpoint_id: 'we_plan',
  event_id: 'evt_plan',
  event_type: 'license.created',
  body: '{"customer_email":"buyer@example.com"}',
  status: 'pending',
  attempts: 0,
  next_attempt_at: now,
  created_at: now,
  delivered_at: null,
};
const checkoutSession = {
  _id: 'cs_plan',
  account_id: 'acct_plan',
  product_id: 'prod_plan',
  status: 'open',
  amount: 1000,
  currency: 'usd',
  customer_email: 'buyer@example.com',
  customer_email_lc: 'buyer@example.com',
  success_url: 'https://example.com/ok',
  expires_at: expires,
  created_at: now,
  license_key: 'KEY-PLAN',
  payment_id: 'pi_plan',
};
const apiKey = {
  _id: 'key_plan',
  account_id: 'acct_plan',
  prefix: 'lk_live_plan',
  digest: 'digest_of_key_plan',
  scope: 'full',
  name: 'CI',
  created_at: now,
  last_used_at: null,
  revoked_at: null,
  created_by: 'operator',
  revoked_by: null,
  slot_key: '0',
};
const requestKey = {
  _id: 'acct_plan:idem-plan',
  request_hash: 'hash_plan',
  state: 'done' as const,
  run: 'run_plan',
  lease_until: now,
  created_at: now,
  status: 201,
  body_json: '{}',
};

/** Every service's models on one connection (their model and collection names are distinct). */
const allModels = (conn: Parameters<typeof licenseModels>[0]) => ({
  license: { ...licenseModels(conn), ...statsModels(conn) },
  imports: importModels(conn),
  mail: { Email: emailModel(conn), Claim: emailClaimModel(conn), Count: mailCountModel(conn), ...portalModels(conn) },
  Delivery: deliveryModel(conn),
  checkout: checkoutModels(conn),
  account: { ...accountModels(conn), ...requestKeyModels(conn) },
});

overPostgres('query plans at 100,000 documents over FerretDB and PostgreSQL', () => {
  let store: StoreAtSize;
  let m: ReturnType<typeof allModels>;

  beforeAll(async () => {
    const opened = await StoreAtSize.open(postgresUrl!, allModels, (m) => [
      { model: m.license.License, docs: [lic] },
      { model: m.license.Activation, docs: [activation] },
      {
        model: m.license.Sighting,
        docs: [{ _id: `${lic._id}:fp-plan`, license_id: lic._id, fingerprint: 'fp-plan', last_seen_at: now }],
      },
      {
        model: m.license.RecentGroups,
        docs: [
          {
            _id: `${lic._id}:grp`,
            account_id: 'acct_plan',
            license_id: lic._id,
            hour: hourAgo,
            code: 'valid',
            fingerprint: 'fp-plan',
            count: 1,
            last_at: now,
          },
        ],
      },
      { model: m.imports.Import, docs: [importDoc] },
      { model: m.imports.Export, docs: [exportDoc] },
      {
        model: m.imports.ImportChunk,
        docs: [{ _id: 'imp_plan:000000', owner_id: 'imp_plan', seq: 0, data: Buffer.from('key\n') }],
      },
      {
        model: m.imports.ExportChunk,
        docs: [{ _id: 'exp_plan:000000', owner_id: 'exp_plan', seq: 0, data: Buffer.from('{}\n') }],
      },
      { model: m.imports.JobSlot, docs: [{ _id: 'import:acct_plan', owner_id: 'imp_plan', at: now }] },
      { model: m.mail.Email, docs: [mail] },
      { model: m.mail.Claim, docs: [{ _id: 'eml_plan:1', mail_id: 'eml_plan', by: 'sender-1', expires_at: expires }] },
      { model: m.mail.Count, docs: [{ _id: 'acct_plan:h:1', count: 1, expires_at: expires }] },
      { model: m.mail.Link, docs: [link] },
      { model: m.mail.LinkUse, docs: [{ _id: 'eml_link', expires_at: expires, created_at: now }] },
      { model: m.mail.Session, docs: [portalSession] },
      { model: m.Delivery, docs: [delivery] },
      { model: m.checkout.Session, docs: [checkoutSession] },
      { model: m.checkout.PageToken, docs: [{ _id: 'tok_plan', session_id: 'cs_plan', expires_at: expires }] },
      { model: m.checkout.Delivery, docs: [{ _id: 'whd_plan', created_at: now }] },
      { model: m.account.ApiKey, docs: [apiKey] },
      {
        model: m.account.Session,
        docs: [
          {
            _id: 'sess_digest',
            user_id: 'usr_plan',
            account_id: 'acct_plan',
            csrf_token: 'csrf',
            created_at: now,
            expires_at: expires,
            ended_at: null,
          },
        ],
      },
      {
        model: m.account.PendingSignup,
        docs: [
          {
            _id: 'signup_digest',
            email: 'owner@example.com',
            account_name: 'Plan',
            password_hash: 'hash',
            created_at: now,
            expires_at: expires,
          },
        ],
      },
      { model: m.account.RequestKey, docs: [requestKey] },
    ]);
    store = opened.store;
    m = opened.models;
  }, 300_000);

  afterAll(() => store?.close());

  it(`${SIZE.toLocaleString('en')} licences, activations, sightings and validation groups: no licence store method reads them all`, async () => {
    const licenses = new LicenseStore(m.license);
    const imported = new BulkLicenses(m.license);
    const stats = new ValidationStatsStore(m.license);
    const cases: Record<string, () => Promise<unknown>> = {
      findIdInAccount: () => licenses.findIdInAccount('acct_plan', lic._id),
      findByKey: () => licenses.findByKey(lic.key),
      findInAccount: () => licenses.findInAccount('acct_plan', lic.key),
      count: () => licenses.count('acct_plan'),
      list: () =>
        licenses.list('acct_plan', { productId: '', customerEmail: '', status: '' }, { limit: 20 } as never, now),
      'list by product, e-mail and status': () =>
        licenses.list(
          'acct_plan',
          { productId: 'prod_plan', customerEmail: 'buyer@example.com', status: 'active' },
          { limit: 20 } as never,
          now,
        ),
      'list expired': () =>
        licenses.list(
          'acct_plan',
          { productId: '', customerEmail: '', status: 'expired' },
          { limit: 20 } as never,
          now,
        ),
      replaceState: () => licenses.replaceState(lic as never, {}, []),
      replaceKey: () => licenses.replaceKey(lic as never, {}, []),
      inExpiryBucket: () => licenses.inExpiryBucket(lic.expiry_bucket!, '', 100),
      inExpiryRange: async () => {
        for await (const _ of licenses.inExpiryRange('2026-01-01T00', '2026-01-02T00'));
      },
      markExpired: () => licenses.markExpired('lic_none', { id: 'evt' } as never),
      findActivation: () => licenses.findActivation(lic._id, 'fp-plan'),
      activate: () =>
        licenses.activate({ ...activation, _id: 'act_new', fingerprint: 'fp-new', fingerprint_key: 'fp-new' }, 3, []),
      reclaimLapsed: () => licenses.reclaimLapsed('act_none', now, now, () => ({}) as never),
      renewLease: () => licenses.renewLease(activation as never, now, '2026-01-01T01', now),
      renewRunningLease: () => licenses.renewRunningLease(lic._id, 'act_none', now, now, '2026-01-01T01'),
      findAnyActivation: () => licenses.findAnyActivation(lic._id, 'act_plan'),
      inReclaimBucket: () => licenses.inReclaimBucket('2026-01-01T00', '', 100),
      listActivations: () => licenses.listActivations(lic._id, { limit: 20 } as never),
      activeSeats: () => licenses.activeSeats(lic._id, 10),
      countActivations: () => licenses.countActivations(lic._id),
      deactivate: () => licenses.deactivate(lic._id, 'act_none', now, () => ({}) as never),
      customerDeactivationsSince: () => licenses.customerDeactivationsSince(lic._id, hourAgo, 3),
      markSeen: () => licenses.markSeen(new Map([[lic._id, new Map([['fp-plan', now]])]])),
      licensesOfCustomer: () => licenses.licensesOfCustomer('acct_plan', 'buyer@example.com', '', 100),
      activationsNamed: () => licenses.activationsNamed(lic._id, 'lap'),
      renameActivation: () => licenses.renameActivation('act_none', 'a', 'b'),
      replaceCustomerEmail: () => licenses.replaceCustomerEmail(lic as never, 'erased@example.invalid', []),
      deleteLicense: () => licenses.deleteLicense('lic_none'),
      'batch: keysOf': () => imported.keysOf([lic._id, 'lic_not_issued_yet']),
      'import: licensesByKeys': () => imported.licensesByKeys([lic.key, 'NOT-A-KEY']),
      'import: activeFingerprints': () => imported.activeFingerprints([lic._id, 'lic_none']),
      'import: removeImported': () => imported.removeImported(['lic_none']),
      'export: exportPage': () => imported.exportPage('acct_plan', '', 100),
      'stats: addRecentGroups': () =>
        stats.addRecentGroups(
          new Map([
            [
              `${lic._id}:grp`,
              {
                accountId: 'acct_plan',
                licenseId: lic._id,
                hour: hourAgo,
                code: 'valid',
                fingerprint: 'fp-plan',
                count: 1,
                lastAt: now,
              } as never,
            ],
          ]),
        ),
      'stats: recentGroups': () => stats.recentGroups(lic._id, 24),
      'stats: deleteExpired': () => stats.deleteExpired(now, 1000),
    };
    expect(await check(store, cases)).toEqual([]);
  });

  it(`${SIZE.toLocaleString('en')} imports, exports, their pieces and job places: no import or export store method reads them all`, async () => {
    const imports = new ImportStore(m.imports);
    const cases: Record<string, () => Promise<unknown>> = {
      get: () => imports.get('acct_plan', 'imp_plan'),
      byId: () => imports.byId('imp_plan'),
      putChunk: () => imports.putChunk('imp_plan', 0, Buffer.from('key\n')),
      chunk: () => imports.chunk('imp_plan', 0),
      deleteChunks: () => imports.deleteChunks('imp_none'),
      update: () => imports.update('imp_none', { bytes: 1 }),
      checkpoint: () => imports.checkpoint('imp_none', 1, { checkpoint_row: 1 }),
      stalledUploads: () => imports.stalledUploads(hourAgo),
      failUpload: () => imports.failUpload({ ...importDoc, _id: 'imp_none' }, { state: 'failed' }),
      runnable: () => imports.runnable(now),
      claim: () => imports.claim({ ...importDoc, epoch: 7 }, now, 60_000),
      'takeSlot (held)': () => imports.takeSlot('import', 'acct_plan', 'imp_other', now),
      freeSlot: () => imports.freeSlot('import', 'acct_none', 'imp_none'),
      getExport: () => imports.getExport('acct_plan', 'exp_plan'),
      updateExport: () => imports.updateExport('exp_none', { bytes: 1 }, { chunks: 1 }),
      updateRunningExport: () => imports.updateRunningExport('exp_none', { bytes: 1 }),
      runningExports: () => imports.runningExports(),
      expiredExports: () => imports.expiredExports(now),
      finishedExports: () => imports.finishedExports('acct_plan', 100),
      markExportExpired: () => imports.markExportExpired('exp_none', now),
      'export chunk': () => imports.chunk('exp_plan', 0, true),
      'export deleteChunks': () => imports.deleteChunks('exp_none', true),
    };
    expect(await check(store, cases)).toEqual([]);
  });

  it(`${SIZE.toLocaleString('en')} mails, mail claims, quota counts, sign-in links, their uses and portal sessions: no notification store method reads them all`, async () => {
    const claims = new EmailClaimStore(m.mail.Claim);
    const emails = new EmailStore(m.mail.Email, claims);
    const counts = new MailCountStore(m.mail.Count);
    const portal = new PortalStore(m.mail);
    const cases: Record<string, () => Promise<unknown>> = {
      'mail: due': () => emails.due(now, 10),
      'mail: deferredDue': () => emails.deferredDue(now, 10),
      'mail: admitDeferred': () => emails.admitDeferred('eml_none', 1, now),
      'mail: postponeDeferred': () => emails.postponeDeferred('acct_plan', now, expires),
      'mail: claim': () => emails.claim('eml_plan', now, expires, 'sender-1'),
      'mail: deleteEndedClaims': () => emails.deleteEndedClaims(now),
      'mail: release': () => emails.release('eml_plan', expires, now),
      'mail: releaseAllOf': () => emails.releaseAllOf('sender-1', now),
      'mail: confirmRecipient': () => emails.confirmRecipient('eml_none'),
      'mail: update': () => emails.update('eml_none', { attempts: 1 }),
      'mail: remove': () => emails.remove('eml_none'),
      'mail: signInsSentSince': () => emails.signInsSentSince('acct_plan', 'buyer@example.com', hourAgo),
      'mail: latestFor': () => emails.latestFor('acct_plan', 'KEY-PLAN', 'purchase', new Date(0)),
      'mail: eraseCustomer': () => emails.eraseCustomer('acct_plan', 'nobody@example.com', 'erased@example.invalid'),
      'mail: byRequestKey': () => emails.byRequestKey('acct_plan', 'req_plan'),
      'mail: find': () => emails.find('acct_plan', 'eml_plan'),
      'mail: list': () => emails.list('acct_plan', { limit: 20 } as never),
      'claims: deleteEnded': () => claims.deleteEnded(now),
      'quota: add': () => counts.add('acct_plan:h:1', 1, expires),
      'quota: add (a new window)': () => counts.add('acct_plan:h:2', 1, expires),
      'quota: deleteEnded': () => counts.deleteEnded(now),
      'portal: putLink': () => portal.putLink(link),
      'portal: linkByDigest': () => portal.linkByDigest('digest_plan'),
      'portal: deleteLink': () => portal.deleteLink('eml_none'),
      'portal: session': () => portal.session('session_digest'),
      'portal: endSession': () => portal.endSession('acct_plan', 'session_none'),
      'portal: eraseCustomer': () => portal.eraseCustomer('acct_plan', 'nobody@example.com'),
      'portal: deleteExpired': () => portal.deleteExpired(now),
    };
    expect(await check(store, cases)).toEqual([]);
  });

  it(`${SIZE.toLocaleString('en')} webhook deliveries, checkout sessions, page tokens and Stripe deliveries: no webhook or checkout store method reads them all`, async () => {
    const deliveries = new DeliveryStore(m.Delivery);
    const checkout = new CheckoutStore(m.checkout);
    const cases: Record<string, () => Promise<unknown>> = {
      'deliveries: updateAll': () => deliveries.updateAll([{ id: 'dlv_none', changes: { attempts: 1 } }]),
      'deliveries: due': () => deliveries.due(now, 10),
      'deliveries: due, busy endpoints left out': () => deliveries.due(now, 10, ['we_busy']),
      'deliveries: prune': () => deliveries.prune(new Date(now.getTime() - 86_400_000)),
      'deliveries: update': () => deliveries.update('dlv_none', { attempts: 1 }),
      'deliveries: find': () => deliveries.find('we_plan', 'dlv_plan'),
      'deliveries: list': () => deliveries.list('we_plan', { limit: 20 } as never),
      'deliveries: bodiesMatching': () => deliveries.bodiesMatching('acct_plan', 'buyer@example\\.com', '', 100),
      'deliveries: replaceBody': () => deliveries.replaceBody('dlv_none', 'a', 'b'),
      'checkout: find': () => checkout.find('acct_plan', 'cs_plan'),
      'checkout: list': () => checkout.list('acct_plan', '', { limit: 20 } as never, now),
      'checkout: list open': () => checkout.list('acct_plan', 'open', { limit: 20 } as never, now),
      'checkout: markExpired': () => checkout.markExpired('cs_none', { id: 'evt' } as never),
      'checkout: findById': () => checkout.findById('cs_plan'),
      'checkout: findByPayment': () => checkout.findByPayment('pi_plan'),
      'checkout: markRefunded': () => checkout.markRefunded('cs_none', now),
      'checkout: pageTokenValid': () => checkout.pageTokenValid('tok_plan', 'cs_plan', now),
      'checkout: prunePageTokens': () => checkout.prunePageTokens(now, 100),
      'checkout: pruneDeliveries': () => checkout.pruneDeliveries(new Date(now.getTime() - 600_000)),
      'checkout: recordLicense': () => checkout.recordLicense('cs_none', 'KEY', { id: 'evt' } as never),
      'checkout: paidWithoutLicense': () => checkout.paidWithoutLicense(10),
      'checkout: dueForExpiry': () => checkout.dueForExpiry(now, 10),
      'checkout: sessionsWithoutLowerCaseEmail': () => checkout.sessionsWithoutLowerCaseEmail('acct_plan', '', 10),
      'checkout: giveLowerCaseEmail': () => checkout.giveLowerCaseEmail('cs_none', 'a@example.com'),
      'checkout: sessionsOfCustomer': () => checkout.sessionsOfCustomer('acct_plan', 'buyer@example.com', '', 10),
      'checkout: replaceCustomerEmail': () => checkout.replaceCustomerEmail('cs_none', 'a@example.com', 'erased'),
    };
    expect(await check(store, cases)).toEqual([]);
  });

  it(`${SIZE.toLocaleString('en')} API keys, dashboard sessions, pending sign-ups and idempotency keys: no account store method reads them all`, async () => {
    const accounts = new AccountStore(m.account);
    const people = new PeopleStore(m.account);
    const requestKeys = new RequestKeyStore(m.account);
    const newKey = { ...apiKey, _id: 'key_new', digest: 'digest_of_key_new', slot_key: '' };
    // Inserts read nothing. The backfill of keys stored without a slot reads them all, once per database:
    // it is the migration 0003-api-key-slots, as every migration's pass over a collection is.
    const cases: Record<string, () => Promise<unknown>> = {
      'keys: insertKey': () => accounts.insertKey(newKey as never, [], 10),
      'keys: countLiveKeys': () => accounts.countLiveKeys('acct_plan'),
      'keys: findKeyByDigest': () => accounts.findKeyByDigest('digest_of_key_plan'),
      'keys: findKey': () => accounts.findKey('key_plan', 'acct_plan'),
      'keys: findKey by id': () => accounts.findKey('key_plan'),
      'keys: revokeKey': () => accounts.revokeKey('key_none', 'acct_plan', now, 'usr_plan', () => ({}) as never),
      'keys: touchLastUsed': () => accounts.touchLastUsed('key_none', now),
      'keys: listKeys': () => accounts.listKeys('acct_plan', { limit: 20 } as never),
      'keys: listKeys revoked': () => accounts.listKeys('acct_plan', { limit: 20 } as never, true),
      'keys: keyActions': () => people.keyActions('acct_plan', 20),
      'sessions: findSession': () => people.findSession('sess_digest'),
      'sessions: endSession': () => people.endSession('sess_none', now),
      'sign-ups: takePendingSignup': () => people.takePendingSignup('signup_none'),
      'request keys: find': () => requestKeys.find('acct_plan:idem-plan'),
      'request keys: remove': () => requestKeys.remove({ _id: 'acct_none:k', run: 'run_none', state: 'running' }),
      'request keys: updateRunning': () => requestKeys.updateRunning('acct_none:k', 'run_none', { state: 'done' }),
    };
    expect(await check(store, cases)).toEqual([]);
  });
});
