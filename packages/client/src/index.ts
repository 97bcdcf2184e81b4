// @licensing/client: the public surface. Everything else is internal.
export { LicensingClient, type LicensingClientOptions } from './client';
export { LicensingError, type FieldError, type ClientErrorCode } from './errors';
export { PageList, type Page, type PageParams } from './pagination';
export type { CreateOptions } from './arguments';
export type { ValidateOptions, LicenseFileOptions, ActivateOptions } from './resources/licenses';
export type { Products } from './resources/products';
export type { Licenses } from './resources/licenses';
export type { Checkout } from './resources/checkout';
export type { Subscriptions } from './resources/subscriptions';
export type { Webhooks } from './resources/webhooks';
export type { Customers } from './resources/customers';
export type { Releases, ArtifactUploadOptions } from './resources/releases';
export type { UpdateCheckOptions } from './resources/updates';
export type { UploadBody } from './upload-body';
export {
  LicensedApp,
  heartbeatIntervalMs,
  type LicensedAppOptions,
  type LicensedAppState,
  type OfflineVerification,
  type OfflineFailure,
} from './licensed-app';
export {
  verifyLicenseFile,
  type LicenseFilePayload,
  type LicenseFileVerification,
  type LicenseFileFailure,
  type PublicKeyInput,
  type VerifyLicenseFileOptions,
} from './license-file';
export {
  verifyWebhook,
  WEBHOOK_TOLERANCE_S,
  type WebhookEvent,
  type WebhookVerification,
  type WebhookFailure,
  type WebhookHeaders,
  type VerifyWebhookOptions,
} from './webhook-signature';
export type * from './types';
export type * from './update-types';
export type { paths, components, operations } from './generated/openapi';
