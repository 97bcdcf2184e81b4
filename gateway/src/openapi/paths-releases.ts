import { releaseList } from '../request-shapes/operations';
import { listOf, ref } from './schemas';
import { type Op, op, pathParam, productId } from './operation';
import { queryParameters } from './shape-schema';

// A product's releases: its versions, drafts until published, yanked when withdrawn.
const releaseId = pathParam('id', 'Release id (rel_…)');

export const releasePaths: Record<string, Record<string, Op>> = {
  '/api/v1/products/{id}/releases': {
    post: op('createRelease', {
      summary: 'Create a release (a draft)',
      tag: 'Releases',
      description:
        'version is Semantic Versioning 2.0.0 and exists once per product (409 for a duplicate, build metadata aside); channel defaults from the pre-release tag. A product has at most 1,000 releases (409 for one more).',
      params: [productId],
      body: 'ReleaseCreate',
      ok: { 201: { description: 'The draft (Location names it)', schema: ref('Release') } },
    }),
    get: op('listReleases', {
      summary: "List a product's releases",
      tag: 'Releases',
      params: [productId, ...queryParameters(releaseList)],
      ok: {
        200: {
          description: 'A page of releases, newest version first (Semantic Versioning precedence)',
          schema: listOf('Release'),
        },
      },
    }),
  },
  '/api/v1/releases/{id}': {
    get: op('getRelease', {
      summary: 'Get a release',
      tag: 'Releases',
      params: [releaseId],
      ok: { 200: { description: 'The release', schema: ref('Release') } },
    }),
    delete: op('deleteRelease', {
      summary: 'Delete a draft',
      tag: 'Releases',
      description: 'Drafts only: a published or yanked release is 409 (yank it instead).',
      params: [releaseId],
      ok: { 200: { description: 'The release, deleted', schema: ref('Release') } },
    }),
  },
  '/api/v1/releases/{id}/publish': {
    post: op('publishRelease', {
      summary: 'Publish a release',
      tag: 'Releases',
      description:
        'A draft becomes published (published_at: the one given at creation, or now) and release.published is sent. Publishing a published release answers it as it is; a yanked one is 409.',
      params: [releaseId],
      ok: { 200: { description: 'The release, published', schema: ref('Release') } },
    }),
  },
  '/api/v1/releases/{id}/yank': {
    post: op('yankRelease', {
      summary: 'Yank a release',
      tag: 'Releases',
      description:
        'It is never offered again and its downloads are refused; release.yanked is sent. Yanking a yanked release answers it as it is.',
      params: [releaseId],
      ok: { 200: { description: 'The release, yanked', schema: ref('Release') } },
    }),
  },
};
