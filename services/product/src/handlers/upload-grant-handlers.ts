import type { Handlers } from '@licensing/runtime';
import type { ProductServiceService } from '@licensing/proto';
import type { UploadGrantDeps } from '../use-cases/deps';
import { createUploadGrant, redeemUploadGrant } from '../use-cases/upload-grants';

type UploadGrantHandlers = Pick<Handlers<typeof ProductServiceService>, 'createUploadGrant' | 'redeemUploadGrant'>;

// Proto to use case and back; the rules live in use-cases/upload-grants.ts and domain/upload-grant.ts.
export function uploadGrantHandlers(deps: UploadGrantDeps): UploadGrantHandlers {
  return {
    async createUploadGrant(req) {
      const { token, expiresAt } = await createUploadGrant(deps, req);
      return { token, expires_at: expiresAt.toISOString() };
    },
    async redeemUploadGrant(req) {
      const g = await redeemUploadGrant(deps, req);
      return {
        account_id: g.account_id,
        release_id: g.release_id,
        filename: g.filename,
        platform: g.platform,
        arch: g.arch,
        signature: g.signature,
      };
    },
  };
}
