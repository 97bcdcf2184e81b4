import type { NextFunction, Request, Response } from 'express';
import { AppError, IDEMPOTENCY_LEASE_MS, sha256, type Logger } from '@licensing/runtime';
import type { Clients } from '../backends/clients';
import { principalOf } from '../auth/principal';
import { idempotencyKey } from '../request-shapes/shapes';
import { isSealedAnswer, openAnswer, sealAnswer } from './sealed-answers';
import { SECRET_ANSWERS } from '../request-shapes/idempotent-posts';

/**
 * The digest that tells one request from another under a key. JSON.stringify recurses, so a body of
 * thousands of nested arrays (within the size limit, which JSON.parse reads) exhausts the stack: that
 * body is refused as the route itself would refuse it, never answered with a 500.
 */
export function requestHashOf(parts: readonly unknown[]): string {
  try {
    return sha256(JSON.stringify(parts), 'hex');
  } catch (err) {
    if (err instanceof RangeError) throw AppError.invalid('body', 'the request body is nested too deeply');
    throw err;
  }
}

const patternOf = (template: string) => new RegExp(`^${template.replace(/:[a-z]+/g, '[^/]+')}/?$`);

/**
 * Honours Idempotency-Key on the given POSTs: the first request with a key runs, and its answer (status,
 * body, Location) is kept 24 hours; the same key with the same request (method, path, query and body)
 * answers it again, with `Idempotent-Replayed: true`, and does nothing else; with another request, 422
 * idempotency_key_reused; while the first still runs, 409. A request that failed (4xx, 5xx, or cut off)
 * frees its key. Mounted after the body is parsed (JSON), or before it for the streamed uploads.
 */
export function idempotencyKeys(clients: Clients, templates: readonly string[], log: Logger) {
  const patterns = templates.map(patternOf);
  const secretPatterns = templates.filter((t) => SECRET_ANSWERS.includes(t)).map(patternOf);
  return async (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'POST' || !patterns.some((p) => p.test(req.path))) return next();
    const key = idempotencyKey(req);
    if (!key) return next();
    const accountId = principalOf(res).accountId;
    const credential = secretPatterns.some((p) => p.test(req.path)) ? (req.get('authorization') ?? '') : undefined;
    const request_hash = requestHashOf([
      req.method,
      req.path,
      req.query,
      req.body ?? null,
      ...(credential === undefined ? [] : [credential]),
    ]);
    const claim = await clients.accounts.claimRequestKey({ account_id: accountId, key, request_hash });
    if (claim.replay) {
      const body =
        claim.body_json && isSealedAnswer(claim.body_json)
          ? openAnswer(claim.body_json, credential ?? '', accountId, key)
          : claim.body_json;
      res.setHeader('Idempotent-Replayed', 'true');
      if (claim.location) res.setHeader('Location', claim.location);
      res.status(claim.status);
      if (body) res.type('application/json').send(body);
      else res.end();
      return;
    }
    const run = { account_id: accountId, key, run: claim.run };
    // Renewed while the request runs: a gateway that dies mid-request frees the key once the lease ends.
    const renewal = setInterval(
      () => void clients.accounts.renewRequestKey(run).catch(() => undefined),
      IDEMPOTENCY_LEASE_MS / 3,
    );
    renewal.unref();
    let body: unknown;
    const json = res.json.bind(res);
    const storedAnswer = (json: string) =>
      credential === undefined ? json : sealAnswer(json, credential, accountId, key);
    let settled = false;
    const settle = (finished: boolean): Promise<void> => {
      if (settled) return Promise.resolve();
      settled = true;
      clearInterval(renewal);
      const succeeded = finished && res.statusCode < 400;
      const location = res.getHeader('location');
      return (
        clients.accounts
          .settleRequestKey({
            ...run,
            succeeded,
            status: res.statusCode,
            body_json: succeeded && body !== undefined ? storedAnswer(JSON.stringify(body)) : '',
            location: succeeded && typeof location === 'string' ? location : '',
          })
          .then(() => undefined)
          // Not kept: the lease frees the key (a retry runs again, as after a failure).
          .catch((err: unknown) => log.warn({ err }, 'the answer of an Idempotency-Key request was not kept'))
      );
    };
    res.json = (value: unknown) => {
      body = value;
      if (res.statusCode >= 400) return json(value);
      // A successful answer is kept before it is sent, as Stripe does: a client that retries the
      // moment it has the answer (or never saw it) gets it replayed, never a 409 for a run that
      // has in fact ended. A failed answer frees the key once it is sent (below).
      void settle(true).finally(() => json(value));
      return res;
    };
    res.once('finish', () => void settle(true));
    res.once('close', () => void settle(res.writableFinished));
    next();
  };
}
