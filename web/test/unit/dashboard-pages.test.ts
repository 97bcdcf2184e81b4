import type { License, Product } from '@licensing/proto';
import { detailPage, listPage } from '../../src/dashboard/license-views';
import { listPage as productListPage } from '../../src/dashboard/product-views';
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
