import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Topology } from '../../scripts/lib/topology';
import { eventually } from './eventually';

export interface SentMail {
  to: string;
  subject: string;
  text: string;
}

/** The mail the account service wrote to the stack's mail folder (MAIL_URL dir://…). */
export async function mailsTo(t: Topology, to: string): Promise<SentMail[]> {
  if (!t.mailUrl?.startsWith('dir://')) throw new Error('this topology sends no mail to a folder');
  const dir = new URL(t.mailUrl).pathname;
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.json')).sort();
  const mails = await Promise.all(names.map(async (n) => JSON.parse(await readFile(join(dir, n), 'utf8')) as SentMail));
  return mails.filter((m) => m.to === to.toLowerCase());
}

/** Waits for the nth mail to an address (1-based) and returns it. */
export async function waitForMail(t: Topology, to: string, nth = 1): Promise<SentMail> {
  let found: SentMail | undefined;
  await eventually(async () => {
    found = (await mailsTo(t, to))[nth - 1];
    expect(found).toBeDefined();
  });
  return found!;
}

/** The sign-up link's token in a confirmation mail. */
export function signupToken(mail: SentMail): string {
  const m = /\/dashboard\/signup\/confirm\?token=([A-Za-z0-9_-]+)/.exec(mail.text);
  if (!m) throw new Error(`no sign-up link in "${mail.subject}"`);
  return m[1];
}
