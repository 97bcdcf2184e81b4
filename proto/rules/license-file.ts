import type { LicenseFile } from '../gen/licensing/v1/license';

/**
 * The signed licence file as the API answers it and the customer portal downloads it
 * (the SDK's verifyLicenseFile reads it): the gateway and the web component send the same JSON.
 */
export const licenseFileJson = (file: LicenseFile) => ({
  kid: file.kid,
  algorithm: file.algorithm,
  payload: file.payload,
  signature: file.signature,
});
