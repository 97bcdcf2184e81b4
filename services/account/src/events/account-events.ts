import { newEnvelope, newEvent } from '@licensing/runtime';
import type { DomainEvent } from '@licensing/proto';
import type { AccountDoc } from '../store/models';

// Gateways listen for account.updated to pick up a new plan or limits at once.
export const accountUpdated = (doc: AccountDoc, now: Date): DomainEvent =>
  newEvent(
    'account.updated',
    doc._id,
    {
      account: {
        id: doc._id,
        name: doc.name,
        plan: doc.plan,
        per_minute_limit: doc.per_minute_limit,
        per_hour_limit: doc.per_hour_limit,
      },
    },
    now,
  );

/** The vendor changed their settings (the audit log's settings.updated): which ones, never their values. */
export const settingsUpdated = (accountId: string, changed: string[], now: Date): DomainEvent =>
  newEnvelope('settings.updated', accountId, { settings: { changed } }, now) as unknown as DomainEvent;
