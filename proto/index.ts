// The one place the gRPC contracts enter TypeScript. Everything under gen/ is
// generated from the .proto files by `npm run proto:gen`: do not edit it.
export * from './gen/licensing/v1/common';
export * from './gen/licensing/v1/account';
export * from './gen/licensing/v1/product';
export * from './gen/licensing/v1/license';
export * as health from './gen/grpc/health/v1/health';
export * from './events';
export * from './rules';
export * from './gen/licensing/v1/checkout';
export * from './gen/licensing/v1/checkout_page';
export * from './gen/licensing/v1/webhook';
export * from './gen/licensing/v1/notification';
export * from './gen/licensing/v1/subscription';
export * from './gen/licensing/v1/import';
