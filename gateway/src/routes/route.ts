import type { Request, RequestHandler, Response, Router } from 'express';
import { AppError } from '@licensing/runtime';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * Registers the handlers of one path and answers 405 (with Allow) for every
 * other method on it, so a wrong method is never mistaken for a missing path.
 */
export function route(router: Router, path: string, handlers: Partial<Record<Method, RequestHandler>>): void {
  for (const [method, handler] of Object.entries(handlers) as [Method, RequestHandler][]) router[method](path, handler);
  const allow = Object.keys(handlers).map((m) => m.toUpperCase()).join(', ');
  router.all(path, (req: Request, res: Response) => {
    res.setHeader('Allow', allow);
    throw new AppError('method_not_allowed', `${req.method} is not allowed here; use ${allow}`);
  });
}
