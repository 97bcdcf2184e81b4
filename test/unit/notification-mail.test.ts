import { displayName, escapeHtml, portalUrl, purchaseMail } from '../../services/notification/src/domain/purchase-mail';
import { DEFAULT_MAIL_SCHEDULE_S, nextMailStep, parseSchedule } from '../../services/notification/src/domain/retry';

// The pure parts of the notification service: the purchase e-mail's text and HTML, and the retry schedule.

const facts = {
  vendorName: 'Acme <script>alert(1)</script> & "Co"',
  supportEmail: 'help@acme.example',
  productName: "Pixel <Forge> & O'Brien",
  licenseKey: 'ABCDE-FGHIJ-KLMNP-QRSTV-WXYZ0-12345',
  expiresAt: '2027-03-01T00:00:00.000Z',
  portalUrl: 'https://licensing.example/portal/acct_1',
  withLicenseFile: true,
};

describe('the purchase e-mail', () => {
  const mail = purchaseMail(facts);

  it('names the vendor, support e-mail, product, key, expiry, portal and attachment in its text part', () => {
    for (const s of [
      facts.vendorName,
      facts.supportEmail,
      facts.productName,
      facts.licenseKey,
      'Expires: 2027-03-01',
      facts.portalUrl,
      'license.json',
    ])
      expect(mail.text).toContain(s);
    expect(mail.subject).toBe(`Your licence key for ${facts.productName}`);
  });

  it('escapes every vendor string in the HTML part', () => {
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).not.toContain('<Forge>');
    expect(mail.html).toContain('Acme &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot;');
    expect(mail.html).toContain('Pixel &lt;Forge&gt; &amp; O&#39;Brien');
    expect(mail.html).toContain(`href="${facts.portalUrl}"`);
    expect(mail.html).toContain('mailto:help@acme.example');
  });

  it('leaves out what is not there: no support e-mail, no file, no expiry', () => {
    const bare = purchaseMail({ ...facts, supportEmail: '', withLicenseFile: false, expiresAt: null });
    expect(bare.text).not.toContain('Questions?');
    expect(bare.html).not.toContain('mailto:');
    expect(bare.text).not.toContain('license.json');
    expect(bare.text).toContain('Expires: never');
  });

  it('keeps a subject and sender name on one line, and the sender name inside its quotes', () => {
    expect(purchaseMail({ ...facts, productName: 'A\r\nBcc: x@evil.example' }).subject).not.toMatch(/[\r\n]/);
    expect(displayName('Evil"\r\nBcc: x@y.z <a@b.c>')).toBe('Evil Bcc: x@y.z a@b.c');
    expect(escapeHtml(`<>&"'`)).toBe('&lt;&gt;&amp;&quot;&#39;');
  });

  it("links the account's portal under the public address", () => {
    expect(portalUrl('https://licensing.example/', 'acct_1')).toBe('https://licensing.example/portal/acct_1');
  });
});

describe('the retry schedule', () => {
  const now = new Date('2026-01-01T00:00:00Z');

  it('waits by the schedule after each failed attempt, then gives up', () => {
    expect(nextMailStep(1, now, [10, 60])).toEqual({ kind: 'retry', at: new Date(now.getTime() + 10_000) });
    expect(nextMailStep(2, now, [10, 60])).toEqual({ kind: 'retry', at: new Date(now.getTime() + 60_000) });
    expect(nextMailStep(3, now, [10, 60])).toEqual({ kind: 'failed' });
  });

  it('reads MAIL_RETRY_SCHEDULE_S and refuses anything but non-negative numbers', () => {
    expect(parseSchedule('10, 60,0.3')).toEqual([10, 60, 0.3]);
    expect(parseSchedule(DEFAULT_MAIL_SCHEDULE_S.join(','))).toEqual(DEFAULT_MAIL_SCHEDULE_S);
    for (const bad of ['', '10,,60', '-1', 'ten']) expect(() => parseSchedule(bad)).toThrow(/MAIL_RETRY_SCHEDULE_S/);
  });
});
