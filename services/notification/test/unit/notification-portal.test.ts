import {
  PORTAL_LINK_TTL_MS,
  PORTAL_SESSION_TTL_MS,
  digestSecret,
  isReachable,
  isSecret,
  newSecret,
  normalEmail,
  portalLinkUrl,
  portalRequestKey,
  rescueRequestKey,
  rescueWaitS,
  sameDigest,
} from '../../src/domain/portal';
import { portalLinkMail, seatRescueMail } from '../../src/domain/portal-mail';
import { AppError } from '@licensing/runtime';

// The pure parts of portal sign-in and seat rescue: secrets, request keys, time windows, and the two mails.

describe('portal secrets', () => {
  it('are 32 random bytes in base64url; only their sha256 is stored, compared in constant time', () => {
    const a = newSecret();
    const b = newSecret();
    expect(isSecret(a)).toBe(true);
    expect(a).not.toBe(b);
    expect(digestSecret(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(digestSecret(a)).not.toContain(a);
    expect(sameDigest(digestSecret(a), a)).toBe(true);
    expect(sameDigest(digestSecret(a), b)).toBe(false);
    expect(sameDigest('short', a)).toBe(false);
  });

  it('a token of any other shape is refused before a look-up', () => {
    for (const t of ['', 'x', `${newSecret()}x`, `${newSecret().slice(0, 42)}!`, ' '.repeat(43)])
      expect(isSecret(t)).toBe(false);
  });

  it('a link lives an hour and a session twelve', () => {
    expect(PORTAL_LINK_TTL_MS).toBe(3_600_000);
    expect(PORTAL_SESSION_TTL_MS).toBe(12 * 3_600_000);
  });
});

describe('addresses', () => {
  it('are trimmed and lower-cased, and garbage is a clear invalid_request', () => {
    expect(normalEmail('email', '  Ann.Lee@Example.COM ')).toBe('ann.lee@example.com');
    for (const bad of ['', 'nobody', 'a@b', `${'x'.repeat(250)}@example.com`, 'two words@example.com']) {
      const err = (() => {
        try {
          normalEmail('email', bad);
        } catch (e) {
          return e as AppError;
        }
      })();
      expect(err).toBeInstanceOf(AppError);
      expect(err!.code).toBe('invalid_request');
      expect(err!.fieldErrors[0].field).toBe('email');
    }
  });

  it("an erased customer's placeholder reaches nobody", () => {
    expect(isReachable('erased-ab12@erased.invalid')).toBe(false);
    expect(isReachable('')).toBe(false);
    expect(isReachable('ann@example.com')).toBe(true);
  });
});

describe('request keys and windows', () => {
  const t0 = new Date('2027-01-01T10:00:05Z');

  it('sign-in requests of one (account, e-mail) within a minute share a key; another minute, address or account does not', () => {
    const k = portalRequestKey('acct_1', 'ann@example.com', t0);
    expect(portalRequestKey('acct_1', 'ann@example.com', new Date(t0.getTime() + 50_000))).toBe(k);
    expect(portalRequestKey('acct_1', 'ann@example.com', new Date(t0.getTime() + 60_000))).not.toBe(k);
    expect(portalRequestKey('acct_1', 'bob@example.com', t0)).not.toBe(k);
    expect(portalRequestKey('acct_2', 'ann@example.com', t0)).not.toBe(k);
  });

  it('seat rescues of one licence within an hour bucket share a key', () => {
    const k = rescueRequestKey('acct_1', 'KEY-1', t0);
    expect(rescueRequestKey('acct_1', 'KEY-1', new Date(t0.getTime() + 3_000_000))).toBe(k);
    expect(rescueRequestKey('acct_1', 'KEY-1', new Date(t0.getTime() + 3_600_000))).not.toBe(k);
    expect(rescueRequestKey('acct_1', 'KEY-2', t0)).not.toBe(k);
  });

  it('the next seat rescue is allowed an hour after the last, in whole seconds', () => {
    expect(rescueWaitS(t0, t0)).toBe(3600);
    expect(rescueWaitS(t0, new Date(t0.getTime() + 1_000_500))).toBe(2600);
    expect(rescueWaitS(t0, new Date(t0.getTime() + 3_600_000))).toBe(0);
  });

  it("the link opens the gateway's confirm page of the account, carrying the token", () => {
    expect(portalLinkUrl('https://lic.example/', 'acct_1', 'abc-_')).toBe(
      'https://lic.example/portal/acct_1/link?token=abc-_',
    );
  });
});

describe('the portal mails', () => {
  const facts = {
    vendorName: 'Acme <script>alert(1)</script> & "Co"',
    supportEmail: 'help@acme.example',
    linkUrl: 'https://lic.example/portal/acct_1/link?token=T0K&x="y"',
  };

  it('the sign-in mail: vendor, one-time link valid an hour, support e-mail; every vendor string escaped', () => {
    const mail = portalLinkMail(facts);
    expect(mail.subject).toBe(`Sign in to your licences from ${facts.vendorName}`);
    for (const s of [facts.vendorName, facts.linkUrl, facts.supportEmail, 'works once, within one hour'])
      expect(mail.text).toContain(s);
    expect(mail.html).toContain('Acme &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot;');
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).toContain('href="https://lic.example/portal/acct_1/link?token=T0K&amp;x=&quot;y&quot;"');
    expect(mail.html).toContain('works once, within one hour');
  });

  it('the seat rescue mail: "Free a seat for <product>", why, the key, and the link', () => {
    const mail = seatRescueMail({ ...facts, productName: 'Pixel <Forge>\r\nBcc: x@y', licenseKey: 'AAAA-BBBB' });
    expect(mail.subject).toBe('Free a seat for Pixel <Forge> Bcc: x@y');
    expect(mail.subject).not.toMatch(/[\r\n]/);
    expect(mail.text).toContain('every seat is taken');
    expect(mail.text).toContain('AAAA-BBBB');
    expect(mail.text).toContain(facts.linkUrl);
    expect(mail.html).toContain('Pixel &lt;Forge&gt;');
    expect(mail.html).not.toContain('<Forge>');
  });

  it('without a support e-mail, none is named', () => {
    expect(portalLinkMail({ ...facts, supportEmail: '' }).text).not.toContain('Questions?');
  });
});
