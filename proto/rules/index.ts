// The validation contract in code: how a licence key is read, how a licence's
// status is derived, and the verdict a validation gives. The licence service
// (the authority) and the gateway's validation cache both use it, so a cached
// answer is the answer the service would give. Also the one source of every
// fixed word list (vocabulary.ts), of the licence policy (policy.ts) and of
// the licence lifecycle (lifecycle.ts), which the services and gateway share, and of every limit a
// request crosses the gateway–service boundary with (the *-limits.ts files, one per subject): the
// gateway's request shapes and the services' checks read the same constant.
export * from './account-limits';
export * from './artifact-rules';
export * from './audit';
export * from './release-json';
export * from './checkout-limits';
export * from './email-address';
export * from './entitlements';
export * from './import-limits';
export * from './lease';
export * from './license-file';
export * from './license-key';
export * from './license-limits';
export * from './lifecycle';
export * from './mail-quota';
export * from './metadata-limits';
export * from './policy';
export * from './product-limits';
export * from './product-sales';
export * from './release-access';
export * from './release-limits';
export * from './roles';
export * from './status';
export * from './verdict';
export * from './visibility';
export * from './webhook-limits';
export * from './vocabulary';
