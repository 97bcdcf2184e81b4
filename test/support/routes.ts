import { Router } from 'express';
import { registeredRoutes } from '../../gateway/src/routes/route';
import { productRoutes } from '../../gateway/src/routes/products';
import { licenseRoutes } from '../../gateway/src/routes/licenses';
import { subscriptionRoutes } from '../../gateway/src/routes/subscriptions';
import { licenseBatchRoutes } from '../../gateway/src/routes/license-batches';
import { checkoutRoutes } from '../../gateway/src/routes/checkout';
import { webhookRoutes } from '../../gateway/src/routes/webhooks';
import { emailRoutes } from '../../gateway/src/routes/emails';
import { customerRoutes } from '../../gateway/src/routes/customers';
import { statusRoutes } from '../../gateway/src/routes/status';

/**
 * Registers every API route (over stand-ins for their clients, which these tests never call) and
 * returns route()'s registry: each path with its methods and the request shapes they validate with.
 */
import { importRoutes } from '../../gateway/src/routes/imports';
import { apiKeyRoutes } from '../../gateway/src/routes/api-keys';
import { auditEventRoutes } from '../../gateway/src/routes/audit-events';
import { memberRoutes } from '../../gateway/src/routes/members';
import { releaseRoutes } from '../../gateway/src/routes/releases';
import { artifactRoutes, downloadLinkRoutes, uploadGrantRoutes } from '../../gateway/src/routes/artifacts';
import { updateFeedRoutes } from '../../gateway/src/routes/update-feeds';

export function everyRoute(): typeof registeredRoutes {
  const router = Router();
  const none = {} as never;
  productRoutes(router, none);
  releaseRoutes(router, none);
  artifactRoutes(router, none);
  downloadLinkRoutes(router, none);
  uploadGrantRoutes(router, none);
  updateFeedRoutes(router, none);
  licenseBatchRoutes(router, none, none);
  licenseRoutes(router, none, none);
  checkoutRoutes(router, none);
  subscriptionRoutes(router, none, none);
  webhookRoutes(router, none);
  emailRoutes(router, none);
  customerRoutes(router, none);
  importRoutes(router, none, none, none);
  statusRoutes(router, none, none, none, '1.2.3');
  apiKeyRoutes(router, none);
  auditEventRoutes(router, none);
  memberRoutes(router, none);
  return registeredRoutes;
}
