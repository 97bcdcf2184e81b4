import type { Response } from 'express';
import type { KeyScope } from '@licensing/proto';

/** Who is calling: the account of an API key, its plan and limits, and the key's scope. */
export interface Principal {
  accountId: string;
  plan: string;
  /** Operator overrides of the rate limits; 0 = the plan's default. */
  perMinuteOverride: number;
  perHourOverride: number;
  keyId: string;
  scope: KeyScope;
}

/** The principal authenticate() put on the request. */
export const principalOf = (res: Response): Principal => res.locals.principal as Principal;
