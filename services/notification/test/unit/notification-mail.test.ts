import { displayName, portalUrl, purchaseMail } from '../../src/domain/purchase-mail';
import {
  DEFAULT_MAIL_MAX_AGE_S,
  DEFAULT_MAIL_SCHEDULE_S,
  nextMailStep,
  parseSchedule,
  sendTimeoutWithin,
  spanText,
} from '../../src/domain/retry';

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

  it('escapes the key, the support address and the portal link too, inside attributes as in text', () => {
    const odd = purchaseMail({
      ...facts,
      licenseKey: `K<b>&"'`,
      supportEmail: `"><img src=x>@evil.example`,
      portalUrl: 'https://licensing.example/portal/a?x=1&y="<q>"',
    });
    expect(odd.html).toContain('<code>K&lt;b&gt;&amp;&quot;&#39;</code>');
    expect(odd.html).toContain(
      '<a href="mailto:&quot;&gt;&lt;img src=x&gt;@evil.example">&quot;&gt;&lt;img src=x&gt;@evil.example</a>',
    );
    expect(odd.html).toContain('<a href="https://licensing.example/portal/a?x=1&amp;y=&quot;&lt;q&gt;&quot;">');
    expect(odd.html).not.toMatch(/<img|<b>|<q>/);
    // The text part is not HTML: it carries what was given as it is.
    expect(odd.text).toContain(`Licence key: K<b>&"'`);
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
  });

  it("links the account's portal under the public address", () => {
    expect(portalUrl('https://licensing.example/', 'acct_1')).toBe('https://licensing.example/portal/acct_1');
  });
});

describe('the retry schedule', () => {
  const now = new Date('2026-01-01T00:00:00Z');

  const created = new Date(now.getTime() - 60_000);
  const DAYS3 = 3 * 86_400;
  const at = (ms: number) => ({ kind: 'retry', at: new Date(now.getTime() + ms) });

  it('waits by the schedule after each failed attempt, then by its last wait again and again', () => {
    expect(nextMailStep(1, now, [10, 60], created, DAYS3)).toEqual(at(10_000));
    expect(nextMailStep(2, now, [10, 60], created, DAYS3)).toEqual(at(60_000));
    expect(nextMailStep(3, now, [10, 60], created, DAYS3)).toEqual(at(60_000));
    expect(nextMailStep(500, now, [10, 60], created, DAYS3)).toEqual(at(60_000));
    // The default schedule: about 21 hours of attempts, then every 12 hours.
    expect(nextMailStep(8, now, DEFAULT_MAIL_SCHEDULE_S, created, DEFAULT_MAIL_MAX_AGE_S)).toEqual(at(43_200_000));
    expect(DEFAULT_MAIL_MAX_AGE_S).toBe(259_200);
  });

  it('makes one last attempt at the maximum age, and gives up on a failure then or after it, saying why', () => {
    const deadline = created.getTime() + DAYS3 * 1000;
    const nearly = new Date(deadline - 5000);
    expect(nextMailStep(9, nearly, [10, 60], created, DAYS3)).toEqual({ kind: 'retry', at: new Date(deadline) });
    for (const when of [new Date(deadline), new Date(deadline + 1)])
      expect(nextMailStep(10, when, [10, 60], created, DAYS3)).toEqual({
        kind: 'failed',
        reason: 'not sent within MAIL_MAX_AGE_S (3 days) after 10 attempts; given up',
      });
    expect(nextMailStep(1, now, [10], new Date(now.getTime() - 90_000), 90)).toEqual({
      kind: 'failed',
      reason: 'not sent within MAIL_MAX_AGE_S (90 s) after 1 attempt; given up',
    });
  });

  it('names the maximum age in whole days, hours or minutes where it is one', () => {
    expect([86_400, 7200, 3600, 120, 90, 1].map(spanText)).toEqual([
      '1 day',
      '2 hours',
      '1 hour',
      '2 minutes',
      '90 s',
      '1 s',
    ]);
  });

  it('limits a send to the shutdown budget, saying when it lowered the setting', () => {
    expect(sendTimeoutWithin(8000, 10_000)).toEqual({ ms: 8000, clamped: false });
    expect(sendTimeoutWithin(10_000, 10_000)).toEqual({ ms: 10_000, clamped: false });
    expect(sendTimeoutWithin(20_000, 10_000)).toEqual({ ms: 10_000, clamped: true });
  });

  it('reads MAIL_RETRY_SCHEDULE_S and refuses anything but non-negative numbers', () => {
    expect(parseSchedule('10, 60,0.3')).toEqual([10, 60, 0.3]);
    expect(parseSchedule(DEFAULT_MAIL_SCHEDULE_S.join(','))).toEqual(DEFAULT_MAIL_SCHEDULE_S);
    for (const bad of ['', '10,,60', '-1', 'ten']) expect(() => parseSchedule(bad)).toThrow(/MAIL_RETRY_SCHEDULE_S/);
  });
});
