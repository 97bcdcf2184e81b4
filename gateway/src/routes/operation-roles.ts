import type { OperationRole } from '@licensing/proto';
import { apiKeyRouteTable } from './api-keys';
import { artifactRouteTable, downloadLinkRouteTable, uploadGrantRouteTable } from './artifacts';
import { auditEventRouteTable } from './audit-events';
import { memberRouteTable } from './members';
import { checkoutRouteTable } from './checkout';
import { customerRouteTable } from './customers';
import { emailRouteTable } from './emails';
import { importRouteTable } from './imports';
import { licenseBatchRouteTable } from './license-batches';
import { licenseRouteTable } from './licenses';
import { productRouteTable } from './products';
import { releaseRouteTable } from './releases';
import { statusRouteTable } from './status';
import { subscriptionRouteTable } from './subscriptions';
import { updateFeedRouteTable } from './update-feeds';
import { webhookRouteTable } from './webhooks';

// Every operation's needed role, read from the route tables that enforce it (route.ts): the OpenAPI
// document's x-required-role and docs/api.md's table say what the gateway does.

const tables = [
  productRouteTable,
  releaseRouteTable,
  artifactRouteTable,
  downloadLinkRouteTable,
  uploadGrantRouteTable,
  updateFeedRouteTable,
  licenseRouteTable,
  licenseBatchRouteTable,
  emailRouteTable,
  customerRouteTable,
  checkoutRouteTable,
  subscriptionRouteTable,
  webhookRouteTable,
  importRouteTable,
  statusRouteTable,
  apiKeyRouteTable,
  auditEventRouteTable,
  memberRouteTable,
];

/** "METHOD /api/v1/path/{param}" (the OpenAPI document's form) → the lowest role that may call it. */
export function operationRoles(): Map<string, OperationRole> {
  const roles = new Map<string, OperationRole>();
  for (const table of tables)
    for (const row of table as readonly { method: string; path: string; role: OperationRole }[])
      roles.set(`${row.method.toUpperCase()} /api/v1${row.path.replace(/:(\w+)/g, '{$1}')}`, row.role);
  return roles;
}
