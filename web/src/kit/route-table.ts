import type { Request, Response, Router } from 'express';

// Pages register their routes as a table: one row per route, each naming the one function that
// answers it, so a reader finds a route's code by its name and a resource's routes in one list.

/** One row of a surface's route table: the method, the path and the handler made from the surface's dependencies. */
export interface PageRoute<Deps> {
  method: 'get' | 'post';
  path: string;
  handler: (deps: Deps) => (req: Request, res: Response) => Promise<void> | void;
}

/** Registers the rows in their order (a literal path listed before a parameterised one is matched first). */
export function registerPageRoutes<Deps>(router: Router, table: readonly PageRoute<Deps>[], deps: Deps): void {
  for (const row of table) router[row.method](row.path, row.handler(deps));
}
