import type { PolicySnapshot } from '@licensing/proto';
import { newLicense } from '../../services/license/src/domain/new-license';
import { LicenseBatchStore } from '../../services/license/src/store/batches';
import { ImportedLicenses } from '../../services/license/src/store/imported-licenses';
import { licenseModels } from '../../services/license/src/store/models';
import { LicenseStore } from '../../services/license/src/store/queries';
import { statsModels, ValidationStatsStore } from '../../services/license/src/store/stats';
import { EmailStore, emailModel, queuedMail } from '../../services/notification/src/store/emails';
import { PortalStore, portalModels } from '../../services/notification/src/store/portal';
import { EmailClaimStore, emailClaimModel } from '../../services/notification/src/store/email-claims';
import { DeliveryStore, deliveryModel } from '../../services/webhook/src/store/deliveries';
import { checkoutModels } from '../../services/checkout/src/store/models';
import { CheckoutStore } from '../../services/checkout/src/store/queries';
import { type Sent, SIZE, StoreAtSize } from '../support/query-plans';

// Every query the stores send to a collection that grows with the data (licences, activations, machine
// sightings, validation telemetry, mail, portal and checkout tokens, webhook deliveries) is served by
// an index on the default store, FerretDB over PostgreSQL, with 100,000 documents in the collection:
// each store method runs against the collection at that size, and each command it sent to FerretDB
// (and each statement it sent to PostgreSQL itself) is explained. A plan that reads every document
// fails, naming the method and the filter. (MongoDB's side is the index-coverage check of npm test.)

const postgresUrl = process.env.TEST_FERRETDB_POSTGRESQL_URL;
// Over SQLite (TEST_STORE=sqlite) there is no PostgreSQL plan to read: the default store is PostgreSQL.
const overPostgres = postgresUrl ? describe : describe.skip;

jest.setTimeout(120_000);

const now = new Date();
const hourAgo = new Date(now.getTime() - 3_600_000);
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

overPostgres('query plans at 100,000 documents over FerretDB and PostgreSQL', () => {
  describe('licence service', () => {
    let store: StoreAtSize;
    let licenses: LicenseStore;
    let batches: LicenseBatchStore;
    let imported: ImportedLicenses;
    let stats: ValidationStatsStore;
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

    beforeAll(async () => {
      const opened = await StoreAtSize.open(
        postgresUrl!,
        (conn) => ({ ...licenseModels(conn), ...statsModels(conn) }),
        (m) => [
          { model: m.License, docs: [lic] },
          { model: m.Activation, docs: [activation] },
          {
            model: m.Sighting,
            docs: [{ _id: `${lic._id}:fp-plan`, license_id: lic._id, fingerprint: 'fp-plan', last_seen_at: now }],
          },
          {
            model: m.RecentGroups,
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
        ],
      );
      store = opened.store;
      licenses = new LicenseStore(opened.models);
      batches = new LicenseBatchStore(opened.models);
      imported = new ImportedLicenses(opened.models);
      stats = new ValidationStatsStore(opened.models);
    }, 180_000);

    afterAll(() => store?.close());

    it(`${SIZE.toLocaleString('en')} licences, activations, sightings and validation groups: no store method reads them all`, async () => {
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
        'batch: keysOf': () => batches.keysOf([lic._id, 'lic_not_issued_yet']),
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
  });

  describe('notification service', () => {
    let store: StoreAtSize;
    let emails: EmailStore;
    let portal: PortalStore;
    const mail = queuedMail(
      'purchase',
      {
        _id: 'eml_plan',
        request_key: 'req_plan',
        account_id: 'acct_plan',
        to: 'buyer@example.com',
        license_key: 'KEY-PLAN',
      },
      now,
    );
    const expires = new Date(now.getTime() + 3_600_000);
    const link = {
      _id: 'eml_link',
      token_digest: 'digest_plan',
      account_id: 'acct_plan',
      email: 'buyer@example.com',
      license_key: '',
      expires_at: expires,
      created_at: now,
    };
    const session = { ...link, _id: 'session_digest', csrf_token: 'csrf' };

    beforeAll(async () => {
      const opened = await StoreAtSize.open(
        postgresUrl!,
        (conn) => ({ Email: emailModel(conn), Claim: emailClaimModel(conn), ...portalModels(conn) }),
        (m) => [
          { model: m.Email, docs: [mail] },
          { model: m.Link, docs: [link] },
          { model: m.LinkUse, docs: [{ _id: 'eml_link', expires_at: expires, created_at: now }] },
          { model: m.Session, docs: [{ ...session, token_digest: undefined }] },
        ],
      );
      store = opened.store;
      emails = new EmailStore(opened.models.Email, new EmailClaimStore(opened.models.Claim));
      portal = new PortalStore(opened.models);
    }, 180_000);

    afterAll(() => store?.close());

    it(`${SIZE.toLocaleString('en')} mails, sign-in links, their uses and portal sessions: no store method reads them all`, async () => {
      const cases: Record<string, () => Promise<unknown>> = {
        'mail: due': () => emails.due(now, 10),
        'mail: claim': () => emails.claim('eml_plan', now, expires, 'sender-1'),
        'mail: release': () => emails.release('eml_plan', expires, now),
        'mail: releaseAllOf': () => emails.releaseAllOf('sender-1', now),
        'mail: confirmRecipient': () => emails.confirmRecipient('eml_none'),
        'mail: update': () => emails.update('eml_none', { attempts: 1 }),
        'mail: remove': () => emails.remove('eml_none'),
        'mail: latestFor': () => emails.latestFor('acct_plan', 'KEY-PLAN', 'purchase', new Date(0)),
        'mail: eraseCustomer': () => emails.eraseCustomer('acct_plan', 'nobody@example.com', 'erased@example.invalid'),
        'mail: byRequestKey': () => emails.byRequestKey('acct_plan', 'req_plan'),
        'mail: find': () => emails.find('acct_plan', 'eml_plan'),
        'mail: list': () => emails.list('acct_plan', { limit: 20 } as never),
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
  });

  describe('webhook and checkout services', () => {
    let store: StoreAtSize;
    let deliveries: DeliveryStore;
    let checkout: CheckoutStore;
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
      expires_at: new Date(now.getTime() + 3_600_000),
      created_at: now,
      license_key: 'KEY-PLAN',
      payment_id: 'pi_plan',
    };

    beforeAll(async () => {
      const opened = await StoreAtSize.open(
        postgresUrl!,
        (conn) => ({ Delivery: deliveryModel(conn), checkout: checkoutModels(conn) }),
        (m) => [
          { model: m.Delivery, docs: [delivery] },
          { model: m.checkout.Session, docs: [checkoutSession] },
          {
            model: m.checkout.PageToken,
            docs: [{ _id: 'tok_plan', session_id: 'cs_plan', expires_at: new Date(now.getTime() + 3_600_000) }],
          },
          { model: m.checkout.Delivery, docs: [{ _id: 'whd_plan', created_at: now }] },
        ],
      );
      store = opened.store;
      deliveries = new DeliveryStore(opened.models.Delivery);
      checkout = new CheckoutStore(opened.models.checkout);
    }, 180_000);

    afterAll(() => store?.close());

    it(`${SIZE.toLocaleString('en')} webhook deliveries, checkout sessions, page tokens and Stripe deliveries: no store method reads them all`, async () => {
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
  });
});
