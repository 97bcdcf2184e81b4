import { emailsOfCsv } from '../../src/dashboard/csv-emails';

describe("the dashboard's CSV of e-mails (web/src/dashboard/csv-emails.ts)", () => {
  it('takes the first column, one row per licence, skipping blank lines, with the line of each', () => {
    expect(emailsOfCsv('a@example.com\n\n b@example.com ,Ada\r\n"c@example.com";x\n')).toEqual({
      emails: ['a@example.com', 'b@example.com', 'c@example.com'],
      lines: [1, 3, 4],
    });
  });

  it('takes the column headed email, e-mail or customer_email, whatever its place', () => {
    expect(emailsOfCsv('name,Email\nAda,ada@example.com\nBob,bob@example.com').emails).toEqual([
      'ada@example.com',
      'bob@example.com',
    ]);
    expect(emailsOfCsv('customer_email\nx@example.com').emails).toEqual(['x@example.com']);
    // A row with too few cells gives an empty address (the licence service names it).
    expect(emailsOfCsv('name,email\nAda').emails).toEqual(['']);
  });

  it('refuses nothing to issue, and more than 1,000 rows', () => {
    expect(() => emailsOfCsv(' \n\n')).toThrow('at least one');
    expect(() => emailsOfCsv('email\n')).toThrow('at least one');
    expect(emailsOfCsv(Array.from({ length: 1000 }, (_, i) => `u${i}@x.io`).join('\n')).emails).toHaveLength(1000);
    expect(() => emailsOfCsv(Array.from({ length: 1001 }, (_, i) => `u${i}@x.io`).join('\n'))).toThrow('At most 1000');
  });
});
