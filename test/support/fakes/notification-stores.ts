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

  async remove(id: string): Promise<void> {
    this.rows.delete(id);
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
