import { Release, type License, type Product } from '@licensing/proto';
import { detailPage, listPage } from '../../src/dashboard/license-views';
import { listPage as productListPage } from '../../src/dashboard/product-views';
import { blankReleaseForm, fileSize, releasesPage } from '../../src/dashboard/release-views';
import type { DashboardSession } from '../../src/dashboard/session';

// The dashboard's pages render what vendors and their customers typed (product names, e-mails,
// machine names, entitlement codes) as text: markup in them comes out escaped, never as markup.

const SCRIPT = '<script>alert(1)</script>';
const ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt;';

const session: DashboardSession = {
  token: 't',
  csrfToken: 'csrf-"token"',
  userEmail: `owner${SCRIPT}@example.com`,
  accountId: 'acct_01JDZ0000000000000000000AB',
  accountName: `Acme ${SCRIPT}`,
  plan: 'free',
  perMinuteLimit: 0,
  perHourLimit: 0,
  role: 'owner',
  mustEnrolMfa: false,
};

const product: Product = {
  id: 'prod_01JDZ0000000000000000000AB',
  account_id: session.accountId,
  name: `Pixel ${SCRIPT}`,
  description: '',
  created_at: '2026-11-01T00:00:00.000Z',
  policy: undefined,
  price: { amount: 1999, currency: 'USD' },
  email_on_purchase: true,
};

const license: License = {
  id: 'lic_01JDZ0000000000000000000AB',
  account_id: session.accountId,
  product_id: product.id,
  key: 'ABCDE-FGHJK-MNPQR-STVWX-YZ012-34567',
  customer_email: `buyer${SCRIPT}@example.com`,
  status: 'active',
  expires_at: '',
  created_at: '2026-11-01T00:00:00.000Z',
  policy: undefined,
  activations: 1,
  metadata: {},
  last_validated_at: '',
  entitlements: [`pdf${SCRIPT}`],
  extra_entitlements: [],
  subscription: undefined,
};

const release = Release.fromPartial({
  id: 'rel_01JDZ0000000000000000000AB',
  product_id: product.id,
  version: '1.0.0-beta.1',
  channel: 'beta',
  status: 'published',
  notes: `notes ${SCRIPT}`,
  published_at: '2026-11-03T00:00:00.000Z',
  entitlements: [`pdf${SCRIPT}`],
  artifacts: [
    {
      filename: `App${SCRIPT}.dmg`,
      platform: 'macos',
      arch: 'universal',
      size: 50_000_000,
      sha256: 'ab'.repeat(32),
      signature: '',
      downloads: 7,
      created_at: '2026-11-02T00:00:00.000Z',
      storage_key: 'acct/rel/file',
    },
  ],
  created_at: '2026-11-01T00:00:00.000Z',
});

/** No markup of the value survives: only the page's own script tag (its asset) is a <script>. */
function expectEscaped(page: string) {
  expect(page).not.toContain(SCRIPT);
  expect(page).toContain(ESCAPED);
  expect(page.match(/<script\b[^>]*>/g)).toEqual(['<script src="/dashboard/assets/app.js" defer>']);
  expect(page).toContain('value="csrf-&quot;token&quot;"');
}

describe('dashboard pages escape what vendors and customers typed', () => {
  it('the licence list: customer e-mail, product name, the search as typed', () => {
    const page = String(
      listPage(session, {
        q: `"><img src=x onerror=alert(1)>`,
        status: '',
        productId: '',
        after: '',
        next: '',
        licenses: [license],
        products: [product],
        form: { product_id: '', customer_email: SCRIPT },
        message: `No licences for ${SCRIPT}.`,
        issued: license,
      }),
    );
    expectEscaped(page);
    expect(page).toContain('value="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"');
    expect(page).not.toContain('<img');
    expect(page).toContain(`<td>buyer${ESCAPED}@example.com</td>`);
    expect(page).toContain(`<option value="${product.id}">Pixel ${ESCAPED}</option>`);
  });

  it("one licence's page: machine names and fingerprints, entitlements, the refused form's text", () => {
    const page = String(
      detailPage(session, {
        license,
        product,
        activations: [
          {
            id: 'act_01JDZ0000000000000000000AB',
            license_id: license.id,
            fingerprint: `fp${SCRIPT}`,
            name: `laptop${SCRIPT}`,
            created_at: '2026-11-02T00:00:00.000Z',
            lease_expires_at: '',
            last_seen_at: '',
          },
        ],
        recent: [
          { hour: '', code: 'valid', fingerprint: `fp${SCRIPT}`, count: 2, last_at: '2026-11-02T00:00:00.000Z' },
        ],
        downloads: { releases: [release] },
        after: '',
        next: '',
        error: `refused ${SCRIPT}`,
        extras: `</textarea>${SCRIPT}`,
      }),
    );
    expectEscaped(page);
    expect(page).toContain(`<code>pdf${ESCAPED}</code>`);
    expect(page).toContain(`&lt;/textarea&gt;${ESCAPED}</textarea>`);
    expect(page).toContain(`<td>laptop${ESCAPED}</td>`);
    // Project-made markup stays markup: links, the status badge, the actions.
    expect(page).toContain('<span class="badge active">active</span>');
    expect(page).toContain(`<a href="/dashboard/products/${product.id}">Pixel ${ESCAPED}</a>`);
    expect(page).toContain(`<a class="danger" href="/dashboard/licenses/${license.key}/suspend">Suspend</a>`);
    // The releases it may download, their files' names as text.
    expect(page).toContain('<tr data-release-version="1.0.0-beta.1">');
    expect(page).toContain(`<code>App${ESCAPED}.dmg</code>`);
  });

  it("a licence's page says why it may download nothing", () => {
    const page = String(
      detailPage(session, {
        license,
        product,
        activations: [],
        recent: [],
        downloads: { refusal: { code: 'expired', detail: `the licence has expired ${SCRIPT}`, next_action: 'renew' } },
        after: '',
        next: '',
      }),
    );
    expectEscaped(page);
    expect(page).toContain(`<span class="badge expired">expired</span> the licence has expired ${ESCAPED}`);
  });

  it("a product's Releases page: versions, notes, files and entitlements as text; the refused form as typed", () => {
    const draft = Release.fromPartial({
      ...release,
      id: 'rel_01JDZ0000000000000000000AC',
      status: 'draft',
      published_at: '',
    });
    const page = String(
      releasesPage(session, {
        product,
        releases: [release, draft],
        after: '',
        next: '',
        form: { ...blankReleaseForm, version: SCRIPT, notes: `</textarea>${SCRIPT}` },
        errors: { form: `refused ${SCRIPT}`, fields: {} },
      }),
    );
    expectEscaped(page);
    expect(page).toContain(`<p class="notes">notes ${ESCAPED}</p>`);
    expect(page).toContain(`<code>App${ESCAPED}.dmg</code>`);
    expect(page).toContain(`<code>pdf${ESCAPED}</code>`);
    expect(page).toContain(`&lt;/textarea&gt;${ESCAPED}</textarea>`);
    // Sizes, the hash shortened (whole in its title), the downloads of each file.
    expect(page).toContain('macos/universal, 47.7 MiB');
    expect(page).toContain(`<code title="${'ab'.repeat(32)}">abababababab…</code>`);
    expect(page).toContain('<span data-testid="downloads">7 downloads</span>');
    expect(page).not.toContain(release.artifacts[0].storage_key);
    // The published release may be yanked; the draft published, yanked, deleted and uploaded to (the
    // upload form hidden until the script runs, the fallback text shown without it).
    const base = `/dashboard/products/${product.id}/releases`;
    expect(page).toContain(`action="${base}/${release.id}/yank"`);
    expect(page).not.toContain(`action="${base}/${release.id}/publish"`);
    for (const action of ['publish', 'yank', 'delete', 'upload-grant'])
      expect(page).toContain(`action="${base}/${draft.id}/${action}"`);
    expect(page).toContain(`data-upload data-reload="${base}" hidden>`);
    expect(page).toContain('data-upload-fallback>');
    expect(page).toContain('<progress max="100" value="0" data-testid="upload-progress" hidden></progress>');
  });

  it('the Releases page of a member below developer: the list without its forms', () => {
    const page = String(
      releasesPage(
        { ...session, role: 'support' },
        { product, releases: [release], after: '', next: '', form: blankReleaseForm },
      ),
    );
    expect(page).toContain('<span data-testid="downloads">7 downloads</span>');
    expect(page).not.toContain('<form method="post" action="/dashboard/products/');
    expect(page).toContain('Your role (support) reads releases');
  });

  it('sizes files as people read them', () => {
    expect([0, 1023, 1024, 1536, 50_000_000, 3 * 1024 ** 3].map(fileSize)).toEqual([
      '0 B',
      '1023 B',
      '1.0 KiB',
      '1.5 KiB',
      '47.7 MiB',
      '3.0 GiB',
    ]);
  });

  it('the product list: names in the table, the refused form as typed', () => {
    const page = String(
      productListPage(session, {
        products: [product],
        after: '',
        next: '',
        form: {
          name: SCRIPT,
          description: '',
          price_amount: '',
          price_currency: 'USD',
          price_interval: '',
          price_interval_count: '',
          price_trial_days: '',
          email_on_purchase: 'yes',
          policy: {},
        },
        errors: { form: `refused ${SCRIPT}`, fields: {} },
      }),
    );
    expectEscaped(page);
    expect(page).toContain(`<a href="/dashboard/products/${product.id}">Pixel ${ESCAPED}</a>`);
    expect(page).toContain(`value="${ESCAPED}"`);
    expect(page).toContain('<td>19.99 USD</td>');
  });
});
