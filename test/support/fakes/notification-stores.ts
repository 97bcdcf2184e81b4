import type { EmailTemplate } from '@licensing/proto';
import type { EmailDoc, EmailStore } from '../../../services/notification/src/store/emails';
import type {
  PortalLinkDoc,
  PortalLinkUseDoc,
  PortalSessionDoc,
  PortalStore,
} from '../../../services/notification/src/store/portal';

// Unit tests only: the notification service's stores in memory, with the same unique keys
// (request_key of a mail, _id of a link's use mark) the real ones enforce.

export class FakeEmailStore {
  readonly rows = new Map<string, EmailDoc>();

  async record(doc: EmailDoc): Promise<boolean> {
    if ([...this.rows.values()].some((r) => r.request_key === doc.request_key)) return false;
    this.rows.set(doc._id, structuredClone(doc));
    return true;
  }

  async byRequestKey(accountId: string, key: string): Promise<EmailDoc | null> {
    return [...this.rows.values()].find((r) => r.account_id === accountId && r.request_key === key) ?? null;
  }

  async latestFor(accountId: string, key: string, template: EmailTemplate, since: Date): Promise<EmailDoc | null> {
    const found = [...this.rows.values()]
      .filter((r) => r.account_id === accountId && r.license_key === key && r.template === template)
      .filter((r) => r.created_at.getTime() > since.getTime())
      .sort((a, b) => b.created_at.getTime() - a.created_at.getTime());
    return found[0] ?? null;
  }

  async signInsSentSince(accountId: string, to: string, since: Date): Promise<number> {
    return [...this.rows.values()].filter(
      (r) =>
        r.account_id === accountId &&
        r.to === to &&
        r.template === 'portal_link' &&
        r.status === 'sent' &&
        r.sent_at !== null &&
        r.sent_at.getTime() > since.getTime(),
    ).length;
  }

  async remove(id: string): Promise<void> {
    this.rows.delete(id);
  }

  // What the sender asks of it (jobs/sender.ts), with the real store's conditions.

  async due(now: Date, limit: number): Promise<EmailDoc[]> {
    return [...this.rows.values()]
      .filter((r) => r.status === 'queued' && r.next_attempt_at && r.next_attempt_at.getTime() <= now.getTime())
      .sort((a, b) => (a.turn ?? 0) - (b.turn ?? 0) || a.next_attempt_at!.getTime() - b.next_attempt_at!.getTime())
      .slice(0, limit)
      .map((r) => structuredClone(r));
  }

  async claim(id: string, now: Date, until: Date, by: string): Promise<EmailDoc | null> {
    const r = this.rows.get(id);
    if (r?.status !== 'queued' || !r.next_attempt_at || r.next_attempt_at.getTime() > now.getTime()) return null;
    Object.assign(r, { next_attempt_at: until, claimed_by: by, claim_epoch: (r.claim_epoch ?? 0) + 1 });
    return structuredClone(r);
  }

  async release(id: string, until: Date, now: Date): Promise<void> {
    const r = this.rows.get(id);
    if (r?.status === 'queued' && r.next_attempt_at?.getTime() === until.getTime()) r.next_attempt_at = now;
  }

  async releaseAllOf(by: string, now: Date): Promise<number> {
    let n = 0;
    for (const r of this.rows.values())
      if (r.status === 'queued' && r.claimed_by === by && r.next_attempt_at && r.next_attempt_at > now) {
        r.next_attempt_at = now;
        n++;
      }
    return n;
  }

  async update(id: string, changes: Partial<EmailDoc>): Promise<void> {
    const r = this.rows.get(id);
    if (r) Object.assign(r, structuredClone(changes));
  }

  async confirmRecipient(id: string): Promise<void> {
    const r = this.rows.get(id);
    if (r) r.recipient_confirmed = true;
  }

  asStore(): EmailStore {
    return this as unknown as EmailStore;
  }
}

export class FakePortalStore {
  readonly links = new Map<string, PortalLinkDoc>();
  readonly uses = new Map<string, PortalLinkUseDoc>();
  readonly sessions = new Map<string, PortalSessionDoc>();

  async putLink(doc: PortalLinkDoc): Promise<void> {
    this.links.set(doc._id, structuredClone(doc));
  }

  async linkByDigest(digest: string): Promise<PortalLinkDoc | null> {
    return [...this.links.values()].find((l) => l.token_digest === digest) ?? null;
  }

  async markUsed(link: PortalLinkDoc, now: Date): Promise<boolean> {
    if (this.uses.has(link._id)) return false;
    this.uses.set(link._id, { _id: link._id, expires_at: link.expires_at, created_at: now });
    return true;
  }

  async deleteLink(id: string): Promise<void> {
    this.links.delete(id);
  }

  async insertSession(doc: PortalSessionDoc): Promise<void> {
    this.sessions.set(doc._id, structuredClone(doc));
  }

  async session(digest: string): Promise<PortalSessionDoc | null> {
    return this.sessions.get(digest) ?? null;
  }

  async endSession(accountId: string, digest: string): Promise<void> {
    if (this.sessions.get(digest)?.account_id === accountId) this.sessions.delete(digest);
  }

  asStore(): PortalStore {
    return this as unknown as PortalStore;
  }
}
