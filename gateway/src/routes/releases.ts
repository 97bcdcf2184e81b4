import type { RequestHandler, Router } from 'express';
import { releaseJson } from '@licensing/proto';
import { principalOf } from '../auth/principal';
import type { Clients } from '../backends/clients';
import { checkId, pageJson, readBody, toPage } from '../request-shapes/shapes';
import { releaseCreate, releaseList } from '../request-shapes/operations';
import { registerRouteTable, withBody, withQuery, type RouteRow } from './route';

// A product's releases: drafts made, published, yanked, listed newest version first. The product
// service keeps them and judges every rule (versions, channels, states); this side checks shapes.

interface ReleaseDeps {
  clients: Clients;
}

const releaseId = (raw: unknown) => checkId('id', 'rel', String(raw));

function createRelease({ clients }: ReleaseDeps): RequestHandler {
  return withBody(releaseCreate, async (req, res, body) => {
    const release = await clients.products.createRelease({
      account_id: principalOf(res).accountId,
      product_id: checkId('id', 'prod', String(req.params.id)),
      version: body.version!,
      channel: body.channel ?? undefined,
      notes: body.notes ?? '',
      published_at: body.published_at ?? undefined,
      entitlements: body.entitlements ?? [],
    });
    res.status(201).location(`/api/v1/releases/${release.id}`).json(releaseJson(release));
  });
}

function listReleases({ clients }: ReleaseDeps): RequestHandler {
  return withQuery(releaseList, async (req, res, query) => {
    const out = await clients.products.listReleases({
      account_id: principalOf(res).accountId,
      product_id: checkId('id', 'prod', String(req.params.id)),
      channel: query.channel ?? '',
      status: query.status ?? '',
      page: toPage(query, 'rel'),
    });
    res.json(pageJson(out.page!, out.data.map(releaseJson)));
  });
}

function getRelease({ clients }: ReleaseDeps): RequestHandler {
  return async (req, res) => {
    const release = await clients.products.getRelease({
      account_id: principalOf(res).accountId,
      id: releaseId(req.params.id),
    });
    res.json(releaseJson(release));
  };
}

/** Publish, yank or delete: a call naming the release, with no body. */
const releaseAction =
  (call: 'publishRelease' | 'yankRelease' | 'deleteRelease') =>
  ({ clients }: ReleaseDeps): RequestHandler =>
  async (req, res) => {
    const id = releaseId(req.params.id);
    if (call !== 'deleteRelease') readBody(req, {});
    const release = await clients.products[call]({ account_id: principalOf(res).accountId, id });
    res.json(releaseJson(release));
  };

export const releaseRouteTable: readonly RouteRow<ReleaseDeps>[] = [
  { method: 'post', path: '/products/:id/releases', role: 'developer', handler: createRelease },
  { method: 'get', path: '/products/:id/releases', role: 'read_only', handler: listReleases },
  { method: 'get', path: '/releases/:id', role: 'read_only', handler: getRelease },
  { method: 'post', path: '/releases/:id/publish', role: 'developer', handler: releaseAction('publishRelease') },
  { method: 'post', path: '/releases/:id/yank', role: 'developer', handler: releaseAction('yankRelease') },
  { method: 'delete', path: '/releases/:id', role: 'developer', handler: releaseAction('deleteRelease') },
];

export function releaseRoutes(router: Router, clients: Clients): void {
  registerRouteTable(router, releaseRouteTable, { clients });
}
