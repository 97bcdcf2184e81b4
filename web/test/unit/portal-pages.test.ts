import type { License } from '@licensing/proto';
import { keyEnding, maskKey } from '../../src/portal/key-mask';
import { licensePage, licensesPage, revealableKey } from '../../src/portal/license-pages';
import { linkConfirmPage, linkProblemPage, linkSentPage, signInPage } from '../../src/portal/pages';
import { sessionCookie, type PortalSession } from '../../src/portal/session';
import { cookieLine, secondsUntil } from '../../src/kit/cookies';
import { nothing } from '../../src/kit/template';

// The customer portal's pure parts: key masking, pages (vendor and customer strings escaped, the one
// answer to the e-mail form), the session cookie's attributes; and the portal's REST pieces.

const KEY = 'ABCDE-FGHJK-MNPQR-STVWX-YZ012-34567';
const vendor = { id: 'acct_01JDZ0000000000000000000AB', name: 'Acme <script>alert(1)</script> & "Sons"' };
const session: PortalSession = {
  token: 't',
  csrfToken: 'csrf-"token"',
  email: 'buyer@example.com',
  expiresAt: '2030-01-01T00:00:00.000Z',
  licenseKey: '',
};
const license = (over: Partial<License> = {}): License => ({
  id: 'lic_01JDZ0000000000000000000AB',
  account_id: vendor.id,
  product_id: 'prod_01JDZ0000000000000000000AB',
  key: KEY,
  customer_email: 'buyer@example.com',
  status: 'active',
  expires_at: '',
  created_at: '2026-11-01T00:00:00.000Z',
  policy: undefined,
  activations: 1,
  metadata: {},
  last_validated_at: '',
  entitlements: ['pdf-export'],
  extra_entitlements: [],
  subscription: undefined,
  ...over,
});

describe('key masking', () => {
  it('shows only the last group; the rest keeps its shape', () => {
    expect(maskKey(KEY)).toBe('•••••-•••••-•••••-•••••-•••••-34567');
    expect(maskKey('ABCDEFGHIJ')).toBe('•••••FGHIJ');
    expect(keyEnding(KEY)).toBe('34567');
  });

  it('reveals the whole key only inside a <details>, with a copy button the script enables', () => {
    const html = String(revealableKey(KEY, 'key-0'));
    expect(html).toContain('•••••-•••••-•••••-•••••-•••••-34567');
    expect(html).toMatch(/<details><summary>Reveal key<\/summary><code id="key-0"[^>]*>ABCDE-FGHJK/);
    expect(html).toContain('data-copy="key-0" hidden');
  });
});

describe('portal pages', () => {
  const pages = [
    signInPage(vendor, 'csrf'),
    linkSentPage(vendor),
    linkConfirmPage(vendor, 'csrf', 'tok"en'),
    linkProblemPage(vendor, 'csrf'),
    licensesPage(vendor, session, [{ license: license(), productName: 'Pixel <Forge>' }], nothing, true),
    licensePage(
      vendor,
      session,
      { license: license(), productName: 'Pixel <Forge>' },
      [
        {
          id: 'act_01JDZ0000000000000000000AB',
          license_id: 'lic_01JDZ0000000000000000000AB',
          fingerprint: 'fp<1>',
          name: '<img src=x onerror=alert(1)>',
          created_at: '2026-11-02T00:00:00.000Z',
          lease_expires_at: '',
          last_seen_at: '',
        },
      ],
      { error: 'next one on <date>' },
    ),
  ].map(String);

  it('escape every vendor and customer string, and have no inline script or style', () => {
    for (const html of pages) {
      expect(html).not.toContain('<script>alert');
      expect(html).toContain('Acme &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Sons&quot;');
      expect(html).not.toMatch(/<script(?![^>]*src="\/portal\/assets\/app\.js")/);
      expect(html).not.toMatch(/\sstyle=|<style/);
      expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
      expect(html).toMatch(/<main id="main">/);
    }
    expect(pages[2]).toContain('value="tok&quot;en"');
    expect(pages[4]).toContain('Pixel &lt;Forge&gt;');
    expect(pages[5]).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(pages[5]).toContain('fp&lt;1&gt;');
    expect(pages[5]).toContain('value="csrf-&quot;token&quot;"');
    expect(pages[5]).toContain('next one on &lt;date&gt;');
    expect(pages[5]).toMatch(/<td>never<\/td>/); // never seen since activation
  });

  it('escape what the vendor typed into a product (its name, its entitlement codes)', () => {
    const page = String(
      licensesPage(
        vendor,
        session,
        [{ license: license({ entitlements: ['pdf', '<script>x()</script>'] }), productName: '<script>y()</script>' }],
        nothing,
        true,
      ),
    );
    expect(page).not.toMatch(/<script>[xy]/);
    expect(page).toContain('<code>pdf</code>, <code>&lt;script&gt;x()&lt;/script&gt;</code>');
    expect(page).toContain('>&lt;script&gt;y()&lt;/script&gt;</a></h2>');
  });

  it('every form carries a CSRF token, and every field a label', () => {
    for (const html of pages) {
      const forms = html.match(/<form[\s\S]*?<\/form>/g) ?? [];
      for (const form of forms) expect(form).toContain('name="_csrf"');
      for (const [, id] of html.matchAll(/<input id="([^"]+)"/g)) expect(html).toContain(`<label for="${id}"`);
    }
  });

  it('the answer to the e-mail form is one fixed page: it names no address', () => {
    expect(String(linkSentPage(vendor))).toBe(String(linkSentPage({ ...vendor })));
    expect(String(linkSentPage(vendor))).not.toContain('@');
    expect(String(linkSentPage(vendor))).toContain('a sign-in link is on its way; it works once within an hour');
  });

  it('offers "Free this machine" only while the policy lets customers free machines', () => {
    const shown = (perMonth: number) =>
      String(
        licensePage(
          vendor,
          session,
          {
            license: license({
              policy: {
                duration_days: undefined,
                max_activations: 2,
                grace_days: 0,
                require_activation: false,
                validate_keys_see_email: false,
                refund_action: 'revoke',
                entitlements: [],
                customer_deactivations_per_30_days: perMonth,
                expiration_strategy: 'restrict',
              },
            }),
            productName: 'P',
          },
          [
            {
              id: 'act_01JDZ0000000000000000000AB',
              license_id: '',
              fingerprint: 'f',
              name: 'n',
              created_at: '',
              lease_expires_at: '',
              last_seen_at: '2026-11-20T10:00:00.000Z',
            },
          ],
        ),
      );
    expect(shown(3)).toContain('Free this machine');
    expect(shown(0)).not.toContain('Free this machine');
    expect(shown(0)).toContain('write to Acme');
    expect(shown(3)).toContain('<time datetime="2026-11-20T10:00:00.000Z">');
  });
});

describe('the portal session cookie', () => {
  it('is HttpOnly, SameSite=Lax, on the account path, for as long as the session, Secure when asked', () => {
    const expires = new Date(Date.now() + 3600_000).toISOString();
    const line = sessionCookie(vendor.id, 'tok', expires, false);
    expect(line).toMatch(
      new RegExp(`^lk_portal=tok; Path=/portal/${vendor.id}; Max-Age=(3599|3600); HttpOnly; SameSite=Lax$`),
    );
    expect(sessionCookie(vendor.id, 'tok', expires, true)).toMatch(/; Secure$/);
  });

  it('never gets a negative or NaN Max-Age', () => {
    expect(secondsUntil('2000-01-01T00:00:00Z')).toBe(0);
    expect(secondsUntil('not a date')).toBe(0);
    expect(cookieLine('a', 'b c', { path: '/p', maxAgeS: 0, secure: false, sameSite: 'Strict' })).toBe(
      'a=b%20c; Path=/p; Max-Age=0; HttpOnly; SameSite=Strict',
    );
  });
});
