import type { Response } from 'express';
import type { Principal } from '@licensing/runtime';

// The principal's shape is shared with the web component (its sessions spend the same budgets):
// it lives with the rate limits in @licensing/runtime.
export type { CredentialKind, LicenseIdentity, Principal } from '@licensing/runtime';

/** The principal authenticate() put on the request. */
export const principalOf = (res: Response): Principal => res.locals.principal as Principal;
