import type { Response } from 'express';
import { AppError } from '@licensing/runtime';
import { grantValidation, releaseGrant, type DownloadGrant, type ReleaseRefusal } from '@licensing/proto';
import { principalOf } from '../auth/principal';
import type { Clients } from '../backends/clients';
import { sendProblem } from '../http/errors';

// What the licence behind a release request may have (proto/rules/release-access.ts judges it from
// one validation): its own with a License credential, the one ?license_key= names with an API key.

/** A refusal as the API sends it: 403 in the one error format, with the validation answer's code and next_action. */
export class ReleaseRefused extends Error {
  constructor(readonly refusal: ReleaseRefusal) {
    super(refusal.detail);
  }
}

/** Sends a ReleaseRefused as its 403; anything else is thrown on to the error handler. */
export function answerRefusal(res: Response, err: unknown): void {
  if (!(err instanceof ReleaseRefused)) throw err;
  const { code, detail, next_action } = err.refusal;
  sendProblem(res, new AppError('forbidden', `${code}: ${detail}`), { validation_code: code, next_action });
}

/**
 * The licence key the request acts for: a License credential's own, else ?license_key= (an API key
 * of any scope naming one of its account's licences); undefined when an API key names none.
 */
export function requestLicenseKey(res: Response, sent: string | undefined): string | undefined {
  const p = principalOf(res);
  if (p.credential === 'license') return p.license!.key;
  return sent || undefined;
}

/**
 * The grant of a licence for a product's releases, or ReleaseRefused. A key no licence of the account
 * has is not_found (404), as another account's licence is: nothing tells them apart.
 */
export async function grantFor(
  clients: Pick<Clients, 'licenses'>,
  res: Response,
  key: string,
  productId: string,
): Promise<DownloadGrant> {
  const answer = await clients.licenses.validateLicense(grantValidation(principalOf(res).accountId, key, productId));
  if (answer.code === 'not_found') {
    res.locals.validationCode = answer.code; // an unknown key spends the unknown-key budget (rate-limits)
    throw AppError.notFound('licence');
  }
  const judged = releaseGrant(answer);
  if ('refusal' in judged) throw new ReleaseRefused(judged.refusal);
  return judged.grant;
}
