import type { Handlers } from '@licensing/runtime';
import type { LicenseServiceService } from '@licensing/proto';
import { issueLicenseFile, type FileDeps } from '../use-cases/license-file';

// Proto to use case and back; the rules live in use-cases/ and domain/.
export function fileHandlers(deps: FileDeps): Pick<Handlers<typeof LicenseServiceService>, 'issueLicenseFile'> {
  return {
    async issueLicenseFile(req) {
      const signed = await issueLicenseFile(deps, req);
      return {
        kid: signed.kid,
        algorithm: 'Ed25519',
        payload: Buffer.from(signed.payload).toString('base64url'),
        signature: Buffer.from(signed.signature).toString('base64url'),
      };
    },
  };
}
