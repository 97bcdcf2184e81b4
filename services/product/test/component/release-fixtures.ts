import { createHash } from 'node:crypto';
import { Artifact, CreateProductRequest, CreateReleaseRequest, type Release } from '@licensing/proto';
import { newId } from '@licensing/runtime';
import type { RunningProduct } from './running-product';

// What the release-file and update-feed tests build their releases with: a new account's product, a
// release in the state a test needs, its files recorded as the gateway records them.

export interface ProductRef {
  account_id: string;
  product_id: string;
}

/** A new account with a product of its own. */
export async function productOfNewAccount(run: RunningProduct): Promise<ProductRef> {
  const account_id = newId('acct');
  const product = await run.products.call.createProduct(
    CreateProductRequest.fromPartial({ account_id, name: 'Photo Editor' }),
  );
  return { account_id, product_id: product.id };
}

/** A file as the gateway records it once stored: its name, machine, and a storage key of its own. */
export const file = (filename: string, platform = 'any', arch = 'any', fields: Partial<Artifact> = {}): Artifact =>
  Artifact.fromPartial({
    filename,
    platform,
    arch,
    size: 1024,
    sha256: createHash('sha256').update(filename).digest('hex'),
    storage_key: `artifacts/${newId('file')}`,
    ...fields,
  });

export interface ReleaseSpec {
  channel?: string;
  entitlements?: string[];
  published_at?: string;
  /** Its files, each [platform, arch] (named after the version and the machine). */
  files?: [string, string][];
  state?: 'draft' | 'published' | 'yanked';
}

/** A release of the product with its files, then published (the default) or yanked, or left a draft. */
export async function releaseWith(
  run: RunningProduct,
  of: ProductRef,
  version: string,
  spec: ReleaseSpec = {},
): Promise<Release> {
  const api = run.products.call;
  let release = await api.createRelease(
    CreateReleaseRequest.fromPartial({
      ...of,
      version,
      channel: spec.channel,
      entitlements: spec.entitlements ?? [],
      published_at: spec.published_at,
    }),
  );
  for (const [platform, arch] of spec.files ?? []) {
    const artifact = file(`app-${version}-${platform}-${arch}.bin`, platform, arch);
    release = (await api.addArtifact({ account_id: of.account_id, release_id: release.id, artifact })).release!;
  }
  const state = spec.state ?? 'published';
  if (state !== 'draft') release = await api.publishRelease({ account_id: of.account_id, id: release.id });
  if (state === 'yanked') release = await api.yankRelease({ account_id: of.account_id, id: release.id });
  return release;
}
