import type { NextFunction, Request, Response } from 'express';
import { AppError, errorSummary, type Logger } from '@licensing/runtime';
import { messagePage } from './pages';
import { clearAllCookies, sessionOf } from './session';
import type { Html } from '../kit/template';

// Dashboard errors are pages, not problem+json; unexpected ones say nothing about internals.

type Page = (res: Response, status: number, page: Html) => void;

/** No route matched: the 404 page. */
export const notFoundPage = (page: Page) => (_req: Request, res: Response) =>
  page(res, 404, messagePage('Not found', 'There is no such page.', sessionOf(res)));

export function errorPages(page: Page, log: Logger, secureCookies: boolean) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const status = (err as { status?: unknown } | null)?.status;
    // A malformed cookie or URL (the router's URIError carries status 400) is the client's mistake.
    if (
      (err instanceof AppError && err.code === 'invalid_request') ||
      err instanceof URIError ||
      (typeof status === 'number' && status >= 400 && status < 500 && status !== 413)
    ) {
      if (err instanceof AppError && err.fieldErrors.some((f) => f.field === 'cookie'))
        clearAllCookies(res, secureCookies);
      // A refused field (a control character in a form) is named, so it can be corrected.
      const fields = err instanceof AppError ? err.fieldErrors.filter((f) => f.field !== 'cookie') : [];
      return page(
        res,
        400,
        messagePage(
          'Bad request',
          fields.length
            ? `${fields.map((f) => f.message).join('; ')}. Go back, correct it and try again.`
            : 'This request could not be understood. Go back to the dashboard and try again.',
          undefined,
        ),
      );
    }
    const app = err instanceof AppError ? err : undefined;
    // Another account's object (an id changed in a URL or form) is simply not there.
    if (app?.code === 'not_found')
      return page(
        res,
        404,
        messagePage(
          'Not found',
          `${app.message[0].toUpperCase()}${app.message.slice(1)} in this account.`,
          sessionOf(res),
        ),
      );
    // Too large a form, or too many fields in it (the parser's two refusals, both 413).
    if (status === 413)
      return page(res, 413, messagePage('Too much data', 'The form was larger than allowed.', sessionOf(res)));
    if (!app || app.code === 'internal') log.error({ err: errorSummary(err) }, 'dashboard error');
    if (app?.code === 'service_unavailable') {
      res.setHeader('Retry-After', '5');
      return page(
        res,
        503,
        messagePage(
          'Temporarily unavailable',
          'Part of the service is not answering. Please try again in a moment.',
          sessionOf(res),
        ),
      );
    }
    page(
      res,
      500,
      messagePage('Something went wrong', `Please try again. Reference: ${res.locals.requestId}`, sessionOf(res)),
    );
  };
}
