import { EMAIL_MAX_LENGTH } from '@licensing/proto';
import { licenseList, licenseValidateQuery, deactivationQuery } from '../request-shapes/operations';
import { listOf, ref } from './schemas';
import { queryParameters } from './shape-schema';
import {
  type Op,
  pathParam,
  pageParams,
  idempotencyHeader,
  op,
  productId,
  licenseKey,
  licenseAction,
} from './operation';

// The products, licences (their validation, lifecycle, activations and files) and customer erasure.
export const productAndLicencePaths: Record<string, Record<string, Op>> = {
  '/api/v1/products': {
    get: op('listProducts', {
      summary: 'List products',
      tag: 'Products',
      params: pageParams,
      ok: { 200: { description: 'A page of products, newest first', schema: listOf('Product') } },
    }),
    post: op('createProduct', {
      summary: 'Create a product',
      tag: 'Products',
      description: 'An account has at most 1,000 products: 409 for one more.',
      body: 'ProductCreate',
      ok: { 201: { description: 'The new product (Location names it)', schema: ref('Product') } },
    }),
  },
  '/api/v1/products/{id}': {
    get: op('getProduct', {
      summary: 'Get a product',
      tag: 'Products',
      params: [productId],
      ok: { 200: { description: 'The product', schema: ref('Product') } },
    }),
    patch: op('updateProduct', {
      summary: 'Update a product',
      tag: 'Products',
      description:
        'Only the fields sent change; `price: null` removes the price. A new policy applies to licences issued afterwards.',
      params: [productId],
      body: 'ProductUpdate',
      ok: { 200: { description: 'The product after the change', schema: ref('Product') } },
    }),
    delete: op('deleteProduct', {
      summary: 'Delete a product',
      tag: 'Products',
      description:
        'Only a product that has no licence and no release: 409 otherwise, naming which (archive it instead). Its signing keys go with it. While the deletion runs the product is archived, so no licence is issued for it meanwhile; refused, it is back as it was. Recorded in the audit log as product.deleted.',
      params: [productId],
      ok: { 200: { description: 'The product, deleted (as it was)', schema: ref('Product') } },
    }),
  },
  '/api/v1/products/{id}/archive': {
    post: op('archiveProduct', {
      summary: 'Archive a product',
      tag: 'Products',
      description:
        'An archived product sells nothing (new checkout sessions are 409; a session opened before and paid still gets its licence) and issues nothing new (new licences and batches are 409); its licences keep working: they validate, activate, get their files and renew. 409 for a product archived already. Publishes product.updated (the audit log records product.archived).',
      params: [productId],
      ok: { 200: { description: 'The product, archived (archived_at set)', schema: ref('Product') } },
    }),
  },
  '/api/v1/products/{id}/unarchive': {
    post: op('unarchiveProduct', {
      summary: 'Unarchive a product',
      tag: 'Products',
      description:
        'Back on sale: it sells and issues licences again. 409 for a product that is not archived. Publishes product.updated (the audit log records product.unarchived).',
      params: [productId],
      ok: { 200: { description: 'The product, on sale (archived_at null)', schema: ref('Product') } },
    }),
  },
  '/api/v1/products/{id}/signing-keys': {
    get: op('listSigningKeys', {
      summary: "List the product's licence-file signing keys",
      tag: 'Products',
      params: [productId],
      ok: {
        200: {
          description: 'Every key, current first',
          schema: {
            type: 'object',
            properties: { data: { type: 'array', items: ref('SigningKey') } },
            required: ['data'],
            additionalProperties: false,
          },
        },
      },
      app: true,
    }),
  },
  '/api/v1/products/{id}/signing-keys/rotate': {
    post: op('rotateSigningKey', {
      summary: 'Rotate the signing key',
      tag: 'Products',
      description:
        'New files are signed with the new key; files signed earlier stay verifiable with the old public key.',
      params: [productId],
      ok: { 201: { description: 'The new current key', schema: ref('SigningKey') } },
    }),
  },
  '/api/v1/licenses': {
    get: op('listLicenses', {
      summary: 'List licences',
      tag: 'Licences',
      params: queryParameters(licenseList),
      ok: { 200: { description: 'A page of licences, newest first', schema: listOf('License') } },
    }),
    post: op('createLicense', {
      summary: 'Issue a licence key',
      tag: 'Licences',
      description:
        '`expires_at`, `max_activations` and `lease_seconds` give this licence its own terms over its product\'s policy (docs/api.md, "Per-licence terms"): its `policy` shows the effective values and `overrides` those that differ. 400 for an `expires_at` in the past or not a time, or a number outside the policy field\'s range.',
      params: [idempotencyHeader],
      body: 'LicenseCreate',
      ok: { 201: { description: 'The new licence and its key', schema: ref('LicenseCreated') } },
    }),
  },
  '/api/v1/licenses/batch': {
    post: op('createLicenseBatch', {
      summary: 'Issue licences in bulk (a job)',
      tag: 'Licences',
      description:
        'Up to 1,000 licences of one product, issued by a job: the answer (202, Location naming the job) says `running`; `GET /api/v1/licenses/batch/{id}` shows its progress, each issued key and each failed item. Every item is checked first: one bad item (named `licenses[3].customer_email`), an unknown product or more than 1,000 items refuse the whole batch, and nothing is issued. Each item is issued once whatever happens (a crash mid-batch, a retry under the same `Idempotency-Key`, which answers the same job). `send_email` items get the licence e-mail once issued. Each licence publishes `license.created`, and the batch `license.batch_completed` when done. The body may be up to 2 MiB.',
      params: [idempotencyHeader],
      body: 'LicenseBatchCreate',
      ok: { 202: { description: 'The job, running', schema: ref('LicenseBatch') } },
    }),
  },
  '/api/v1/licenses/batch/{id}': {
    get: op('getLicenseBatch', {
      summary: 'Get a licence batch job',
      tag: 'Licences',
      params: [pathParam('id', 'Licence batch id (lbat_…)')],
      ok: { 200: { description: 'The job: its progress and results', schema: ref('LicenseBatch') } },
    }),
  },
  '/api/v1/licenses/validate': {
    get: op('validateLicenseByQuery', {
      summary: 'Validate a licence key (query form)',
      tag: 'Validation',
      description:
        'Always 200 for a well-formed request: `valid` says yes or no, `code` says why. Prefer POST /keys/validate: keys in URLs reach logs.',
      params: queryParameters(licenseValidateQuery),
      ok: { 200: { description: 'The verdict', schema: ref('QueryValidation') } },
      app: true,
    }),
  },
  '/api/v1/keys/validate': {
    post: op('validateKey', {
      summary: 'Validate a licence key',
      tag: 'Validation',
      description:
        'Always 200 for a well-formed request. With `entitlements`, a licence that lacks any of them answers `valid: false`, `entitlements_missing` (checked after status and activation). `/v1/keys/validate` is the same endpoint.',
      body: 'KeyValidationRequest',
      ok: { 200: { description: 'The verdict', schema: ref('KeyValidation') } },
      app: true,
    }),
  },
  '/api/v1/licenses/{key}': {
    get: op('getLicense', {
      summary: 'Get a licence',
      tag: 'Licences',
      params: [licenseKey],
      ok: { 200: { description: 'The licence', schema: ref('License') } },
      app: true,
    }),
    patch: op('updateLicense', {
      summary: "Update a licence's e-mail, metadata, entitlements or own terms",
      tag: 'Licences',
      description:
        "`entitlements` replaces the licence's own entitlements whole (`[]` clears them); its effective set is its policy's and these. `expires_at`, `max_activations` and `lease_seconds` set the licence's own terms over its product's policy (a value equal to the product's policy removes that override; docs/api.md, \"Per-licence terms\"). A `max_activations` below the machines in use is 409 unless `deactivate_excess` is true, which deactivates the longest-unseen machines until they fit (`license.deactivated`, reason `limit_lowered`). Publishes `license.updated`.",
      params: [licenseKey],
      body: 'LicenseUpdate',
      ok: { 200: { description: 'The licence after the change', schema: ref('License') } },
    }),
    delete: op('deleteLicense', {
      summary: 'Delete a licence',
      tag: 'Licences',
      description:
        'Deletes the licence and its activations: its key then validates as `not_found` and its `License` credential stops working. Publishes `license.deleted`. 404 when the account has no such licence; 409 while a subscription bills it (any status but canceled): cancel the subscription first.',
      params: [licenseKey],
      ok: { 204: { description: 'Deleted' } },
    }),
  },
  '/api/v1/licenses/{key}/suspend': {
    post: licenseAction(
      'suspend',
      'Suspend a licence',
      'Validation answers `suspended` until reinstated. 409 when not allowed (see the state diagram).',
    ),
  },
  '/api/v1/licenses/{key}/reinstate': {
    post: licenseAction('reinstate', 'Reinstate a suspended licence', '409 when not allowed (revocation is final).'),
  },
  '/api/v1/licenses/{key}/revoke': {
    post: licenseAction(
      'revoke',
      'Revoke a licence for good',
      'From active or suspended; final. 409 when not allowed.',
    ),
  },
  '/api/v1/licenses/{key}/renew': {
    post: licenseAction(
      'renew',
      'Renew a licence',
      "Extends expiry by the policy's duration (from the current expiry while it is ahead, else from now) and takes the product's current policy. 409 for perpetual or revoked licences.",
    ),
  },
  '/api/v1/licenses/{key}/reroll': {
    post: op('rerollLicense', {
      summary: 'Give the licence a new key',
      tag: 'Licences',
      description:
        'Replaces a leaked or shared key, keeping everything else (id, activations, entitlements, metadata, expiry). The old key keeps validating for `grace_hours` (0 to 720; 0, the default: it stops at once) with `next_action: update_key` and the licence shown under the old key (never the new one); afterwards it is `not_found`, and it never works on other routes. A revoked licence cannot be rerolled (409). Asking again with the old key (a retry) answers the licence with its new key. Publishes `license.rerolled`; `send_email: true` mails the new key to the customer.',
      params: [licenseKey],
      body: 'LicenseReroll',
      ok: { 200: { description: 'The licence with its new key', schema: ref('License') } },
    }),
  },
  '/api/v1/licenses/{key}/activations': {
    get: op('listActivations', {
      summary: "List a licence's activations",
      tag: 'Licences',
      params: [licenseKey, ...pageParams],
      ok: { 200: { description: 'A page of activations', schema: listOf('Activation') } },
      app: true,
    }),
    post: op('activateLicense', {
      summary: 'Activate a machine',
      tag: 'Licences',
      description:
        '201 for a new activation, 200 when the fingerprint was already active (on a floating licence with a fresh lease, even a lapsed one). 409 when every slot is taken (the detail starts with activation_limit_reached and the problem has `next_action: free_a_seat`: POST …/seat-rescue lets the user free one); on a floating licence a lapsed seat is reclaimed first (license.deactivated, reason lapsed) and its slot reused.',
      params: [licenseKey],
      body: 'ActivationCreate',
      ok: {
        200: { description: 'Already active', schema: ref('Activation') },
        201: { description: 'Activated', schema: ref('Activation') },
      },
      app: true,
    }),
  },
  '/api/v1/licenses/{key}/activations/{id}': {
    delete: op('deactivateLicense', {
      summary: 'Free an activation slot',
      tag: 'Licences',
      description:
        "With an app credential (a License credential or a validate-scope key) this counts against the policy's customer_deactivations_per_30_days, as a machine freed in the customer portal (429 once spent, 409 when it is 0), except an app releasing its own floating seat (fingerprint: the seat's). A full-scope key frees any machine.",
      params: [licenseKey, pathParam('id', 'Activation id (act_…)'), ...queryParameters(deactivationQuery)],
      ok: { 204: { description: 'Deactivated' } },
      app: true,
    }),
  },
  '/api/v1/licenses/{key}/activations/{id}/heartbeat': {
    post: op('heartbeatActivation', {
      summary: "Renew a floating seat's lease",
      tag: 'Licences',
      description:
        "Sets lease_expires_at to now + the policy's lease_seconds. 404 when the licence has no such activation (another licence's included). 409 (conflict) when the policy has no lease (node-locked), the activation was deactivated or reclaimed, the licence is not active, or the lease already lapsed (detail starts with lease_expired): activate again, which is idempotent.",
      params: [licenseKey, pathParam('id', 'Activation id (act_…)')],
      ok: { 200: { description: 'The activation with its new lease', schema: ref('Activation') } },
      app: true,
    }),
  },
  '/api/v1/licenses/{key}/file': {
    post: op('issueLicenseFile', {
      summary: 'Issue a signed licence file for offline checks',
      tag: 'Licences',
      description:
        "With an app credential (a License credential or a validate-scope key) the file's customer_email is null unless the policy's validate_keys_see_email allows it, and ttl_days is at most the policy's max_file_ttl_days (default 30; more is 400 naming ttl_days). A full-scope key may ask for up to 365.",
      params: [licenseKey],
      body: 'LicenseFileRequest',
      ok: { 201: { description: 'The signed file', schema: ref('LicenseFile') } },
      app: true,
    }),
  },
  '/api/v1/licenses/{key}/email': {
    post: op('sendLicenseEmail', {
      summary: 'E-mail the licence to its customer again',
      tag: 'Licences',
      description:
        "Queues the purchase e-mail (key, product, expiry, portal link, licence file) to the licence's customer_email; the notification service sends it with retries. Its progress is in GET /api/v1/emails.",
      params: [licenseKey],
      ok: { 202: { description: 'Queued', schema: ref('Email') } },
    }),
  },
  '/api/v1/licenses/{key}/seat-rescue': {
    post: op('requestSeatRescue', {
      summary: "E-mail the licence's owner a portal link to free a seat",
      tag: 'Licences',
      description:
        "For an app whose activation was refused because every seat is taken (`next_action: free_a_seat`): the licence's customer e-mail gets a one-time link (valid an hour) that opens the customer portal on this licence's machines, where they free one; the app's next activation then succeeds. No body. 409 when the licence has no customer e-mail; 429 (Retry-After) when one was sent for this licence within the hour.",
      params: [licenseKey],
      ok: { 202: { description: 'Queued (the answer never names the address)', schema: ref('SeatRescue') } },
      app: true,
    }),
  },
  '/api/v1/customers/{email}': {
    delete: op('eraseCustomer', {
      summary: "Erase a customer's e-mail everywhere",
      tag: 'Licences',
      description:
        "Replaces the e-mail (case-insensitive) with one placeholder in the account's licences and their activations' names, checkout sessions, mail log and webhook deliveries, and ends the customer's portal sessions; the licences stay valid and their keys keep working. Publishes customer.erased (without the e-mail). 400 for a malformed e-mail; 503 when a service did not answer: repeat the request (every step is idempotent).",
      params: [
        pathParam('email', 'The customer e-mail (percent-encoded)', { type: 'string', maxLength: EMAIL_MAX_LENGTH }),
      ],
      ok: { 200: { description: 'Erased', schema: ref('CustomerErasure') } },
    }),
  },
};
