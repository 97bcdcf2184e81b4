// The validation contract in code: how a licence key is read, how a licence's
// status is derived, and the verdict a validation gives. The licence service
// (the authority) and the gateway's validation cache both use it, so a cached
// answer is the answer the service would give.
export * from './license-key';
export * from './status';
export * from './verdict';
export * from './visibility';
