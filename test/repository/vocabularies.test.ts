import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import mongoose, { type Model } from 'mongoose';
import {
  actorTypes,
  GIVEN_MEMBER_ROLES,
  MEMBER_ROLES,
  MEMBER_STATUSES,
  API_KEY_ROLES,
  billingCardOutcomes,
  checkoutCancelOutcomes,
  checkoutPageStates,
  checkoutPayOutcomes,
  checkoutStatuses,
  paymentProviders,
  contractNamesEveryPolicyField,
  DEFAULT_POLICY,
  deliveryStatuses,
  emailStatuses,
  emailTemplates,
  eventTypes,
  licenseBatchItemStatuses,
  licenseBatchStatuses,
  EXAMPLE_LICENSE_KEY,
  generateLicenseKey,
  FOREIGN_KEY_PATTERN,
  exportStatuses,
  importFormats,
  jobStatuses,
  keyScopes,
  LICENSE_KEY_PATTERN,
  licenseActions,
  licenseStatuses,
  nextActions,
  parseLicenseKey,
  plans,
  policyFields,
  policyRules,
  policyToContract,
  refundActions,
  expirationStrategies,
  storedLicenseStatuses,
  subscriptionStatuses,
  subscriptionChanges,
  priceIntervals,
  invoiceStatuses,
  refundCauses,
  releaseChannels,
  releaseStatuses,
  artifactPlatforms,
  artifactArchs,
  validationCodes,
  withPolicyDefaults,
  type Policy,
} from '@licensing/proto';
import { openApiDocument } from '../../gateway/src/openapi/document';
import { policyJson } from '../../gateway/src/routes/products';
import { policyInput } from '../../gateway/src/request-shapes/operations';
import { checkPolicy } from '../../services/product/src/domain/policy';
import { licenseModels } from '../../services/license/src/store/models';
import { checkoutModels } from '../../services/checkout/src/store/models';
import { accountModels } from '../../services/account/src/store/models';
import { deliveryModel } from '../../services/webhook/src/store/deliveries';
import { emailModel } from '../../services/notification/src/store/emails';
import { releaseModel } from '../../services/product/src/store/releases';

// One source per vocabulary (proto/rules/vocabulary.ts) and one declaration of the licence policy
// (proto/rules/policy.ts). Code takes its lists from there, and the compiler holds the tables keyed by
// them (Record<Status, …>, Record<PolicyField, …>). What neither can reach is checked here: the
// .proto comments, the OpenAPI document (and through it the SDK's types), the stores' enum
// validators and the docs. A word added in one place only fails this file.

const root = join(__dirname, '..', '..');
const read = (...path: string[]) => readFileSync(join(root, ...path), 'utf8');

const vocabularies: Record<string, readonly string[]> = {
  apiKeyRoles: API_KEY_ROLES,
  memberRoles: MEMBER_ROLES,
  givenMemberRoles: GIVEN_MEMBER_ROLES,
  memberStatuses: MEMBER_STATUSES,
  actorTypes,
  licenseStatuses,
  storedLicenseStatuses,
  licenseActions,
  refundActions,
  expirationStrategies,
  validationCodes,
  nextActions,
  plans,
  keyScopes,
  checkoutStatuses,
  deliveryStatuses,
  emailStatuses,
  emailTemplates,
  subscriptionStatuses,
  subscriptionChanges,
  priceIntervals,
  invoiceStatuses,
  refundCauses,
  licenseBatchStatuses,
  licenseBatchItemStatuses,
  auditEntryTypes: eventTypes.filter((t) => t.startsWith('api_key.')),
  importFormats,
  jobStatuses,
  exportStatuses,
  paymentProviders,
  checkoutPageStates,
  checkoutPayOutcomes,
  checkoutCancelOutcomes,
  billingCardOutcomes,
  releaseChannels,
  releaseStatuses,
  artifactPlatforms,
  artifactArchs,
};
const nameOf = (words: readonly string[]) =>
  Object.entries(vocabularies).find(([, list]) => list.join() === words.join())?.[0];

// ---- the .proto files ------------------------------------------------------------------------

interface ProtoField {
  message: string;
  name: string;
  type: string;
  optional: boolean;
  comment: string;
}

function protoFields(): ProtoField[] {
  const dir = join(root, 'proto', 'licensing', 'v1');
  const fields: ProtoField[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.proto'))) {
    let message = '';
    let comment: string[] = [];
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      const text = line.trim();
      const opens = /^message (\w+) \{/.exec(text);
      const field = /^(optional |repeated )?([\w.<>, ]+?) (\w+) = \d+;/.exec(text);
      if (opens) message = opens[1];
      else if (field && message)
        fields.push({
          message,
          name: field[3],
          type: field[2],
          optional: field[1] === 'optional ',
          comment: comment.join(' '),
        });
      comment = text.startsWith('//') ? [...comment, text.slice(2).trim()] : [];
    }
  }
  return fields;
}

/** The `a | b | c` word list a comment gives, if any (a word may hold digits after its first letter: x86_64). */
const listed = (comment: string): string[] | undefined =>
  /(?:^|[\s:])([a-z_.][a-z0-9_.]*(?: \| [a-z_.][a-z0-9_.]*)+)/.exec(comment)?.[1].split(' | ');

/** Every string field that holds one of the vocabularies, and which. */
const protoVocabulary: Record<string, string> = {
  'Account.plan': 'plans',
  'CreateAccountRequest.plan': 'plans',
  'UpdateAccountRequest.plan': 'plans',
  'ApiKey.scope': 'keyScopes',
  'CreateApiKeyRequest.scope': 'keyScopes',
  'AuthenticateResponse.scope': 'keyScopes',
  'AuthenticateResponse.role': 'apiKeyRoles',
  'ApiKey.role': 'apiKeyRoles',
  'CreateApiKeyRequest.role': 'apiKeyRoles',
  'AuditEntry.type': 'auditEntryTypes',
  'AuditActor.type': 'actorTypes',
  'Member.role': 'memberRoles',
  'Member.status': 'memberStatuses',
  'License.status': 'licenseStatuses',
  'ListLicensesRequest.status': 'licenseStatuses',
  'ValidationFacts.stored_status': 'storedLicenseStatuses',
  'ResolveLicenseKeyResponse.stored_status': 'storedLicenseStatuses',
  'ValidateLicenseRequest.key_scope': 'keyScopes',
  'IssueLicenseFileRequest.key_scope': 'keyScopes',
  'DeactivateRequest.key_scope': 'keyScopes',
  'ValidateLicenseResponse.code': 'validationCodes',
  'ValidateLicenseResponse.next_action': 'nextActions',
  'TransitionLicenseRequest.action': 'licenseActions',
  'LicensePolicy.refund_action': 'refundActions',
  'LicensePolicy.expiration_strategy': 'expirationStrategies',
  'CheckoutSession.status': 'checkoutStatuses',
  'ListCheckoutSessionsRequest.status': 'checkoutStatuses',
  'WebhookDelivery.status': 'deliveryStatuses',
  'Email.status': 'emailStatuses',
  'Email.template': 'emailTemplates',
  'LicenseSubscription.status': 'subscriptionStatuses',
  'Subscription.status': 'subscriptionStatuses',
  'ListSubscriptionsRequest.status': 'subscriptionStatuses',
  'ApplySubscriptionRequest.change': 'subscriptionChanges',
  'Price.interval': 'priceIntervals',
  'Subscription.interval': 'priceIntervals',
  'SubscriptionInvoice.status': 'invoiceStatuses',
  'SubscriptionRefund.cause': 'refundCauses',
  'Import.format': 'importFormats',
  'Import.status': 'jobStatuses',
  'CreateImportRequest.format': 'importFormats',
  'Export.status': 'exportStatuses',
  'LicenseBatch.status': 'licenseBatchStatuses',
  'LicenseBatchResult.status': 'licenseBatchItemStatuses',
  'CheckoutPageSession.provider': 'paymentProviders',
  'CheckoutPageSession.interval': 'priceIntervals',
  'CheckoutPage.state': 'checkoutPageStates',
  'PayCheckoutResponse.outcome': 'checkoutPayOutcomes',
  'CancelCheckoutResponse.outcome': 'checkoutCancelOutcomes',
  'CheckoutBilling.status': 'subscriptionStatuses',
  'CheckoutBilling.outcome': 'billingCardOutcomes',
  'Release.channel': 'releaseChannels',
  'Release.status': 'releaseStatuses',
  'ListReleasesRequest.channel': 'releaseChannels',
  'ListReleasesRequest.status': 'releaseStatuses',
  'Artifact.platform': 'artifactPlatforms',
  'Artifact.arch': 'artifactArchs',
  'CreateUploadGrantRequest.platform': 'artifactPlatforms',
  'CreateUploadGrantRequest.arch': 'artifactArchs',
};

describe('the .proto files', () => {
  const fields = protoFields();

  it('were read: every message of the contracts, with its fields', () => {
    expect(fields.length).toBeGreaterThan(150);
    for (const key of Object.keys(protoVocabulary)) expect(fields.map((f) => `${f.message}.${f.name}`)).toContain(key);
  });

  it('list in their comments exactly the words of the vocabulary each field holds', () => {
    const found = fields
      .filter((f) => listed(f.comment))
      .map((f) => [`${f.message}.${f.name}`, nameOf(listed(f.comment)!) ?? listed(f.comment)!.join(' | ')]);
    expect(Object.fromEntries(found)).toEqual(protoVocabulary);
  });

  it('say which words every field named like a vocabulary holds (a new plan or status field is registered above)', () => {
    const likely = fields.filter(
      (f) =>
        f.type === 'string' &&
        /^(plan|scope|key_scope|status|stored_status|action|next_action|refund_action|expiration_strategy)$/.test(
          f.name,
        ),
    );
    expect(likely.length).toBeGreaterThan(10);
    for (const f of likely) expect(protoVocabulary).toHaveProperty([`${f.message}.${f.name}`]);
  });

  it('declare LicensePolicy with exactly the declared policy fields, in order, of their types', () => {
    expect(contractNamesEveryPolicyField).toBe(true);
    const message = fields.filter((f) => f.message === 'LicensePolicy');
    expect(message.map((f) => f.name)).toEqual(policyFields);
    for (const f of message) {
      const rule = policyRules[f.name as keyof typeof policyRules];
      // A number whose default is not 0 is optional too: a sender that does not know the field means its default, not 0.
      const expected =
        rule.kind === 'int'
          ? ['int32', rule.nullable || rule.default !== 0]
          : rule.kind === 'bool'
            ? ['bool', false]
            : ['string', false];
      expect([f.name, f.type, f.optional]).toEqual([f.name, ...expected]);
    }
  });
});

// ---- the OpenAPI document (and so the SDK's generated types) -----------------------------------

/** Every `enum` in the document, by where it is. */
function enumsOf(node: unknown, path: string, out: Map<string, string[]>): Map<string, string[]> {
  if (Array.isArray(node)) {
    for (const [i, v] of node.entries()) enumsOf(v, `${path}[${i}]`, out);
  } else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      // A nullable word (a one-time price's interval) lists null too: null is no word.
      if (k === 'enum')
        out.set(
          path,
          (v as unknown[]).includes(null) ? ((v as unknown[]).filter((w) => w !== null) as string[]) : (v as string[]),
        );
      else enumsOf(v, path ? `${path}.${k}` : k, out);
    }
  }
  return out;
}

/** Word lists of the document that are no vocabulary of the contracts: the gateway's own status words. */
const localEnums = [
  ['ok', 'degraded', 'down'],
  ['ready', 'shutting_down'],
  ['redis', 'in_memory_fallback'],
  ['configured', 'not configured', 'unknown'],
].map((l) => l.join());

describe('the OpenAPI document', () => {
  const doc = openApiDocument('test');
  const enums = enumsOf(doc, '', new Map());
  const schema = (name: string) => doc.components.schemas[name] as { properties: Record<string, unknown> };

  it('lists no word list of its own: each enum is a vocabulary, the error codes, or a status word of the gateway', () => {
    const problem = doc.components.schemas.Problem as { properties: { code: { enum: string[] } } };
    const strays = [...enums].filter(
      ([, words]) => !nameOf(words) && !localEnums.includes(words.join()) && words !== problem.properties.code.enum,
    );
    expect(strays).toEqual([]);
  });

  it.each([
    ['components.schemas.License.properties.status', 'licenseStatuses'],
    ['components.schemas.QueryValidation.properties.status.anyOf[0]', 'licenseStatuses'],
    ['components.schemas.KeyValidation.properties.status.anyOf[0]', 'licenseStatuses'],
    ['components.schemas.ValidationCode', 'validationCodes'],
    ['components.schemas.NextAction', 'nextActions'],
    ['components.schemas.Policy.properties.refund_action', 'refundActions'],
    ['components.schemas.PolicyInput.properties.refund_action', 'refundActions'],
    ['components.schemas.Policy.properties.expiration_strategy', 'expirationStrategies'],
    ['components.schemas.PolicyInput.properties.expiration_strategy', 'expirationStrategies'],
    ['components.schemas.CheckoutSession.properties.status', 'checkoutStatuses'],
    ['components.schemas.WebhookDelivery.properties.status', 'deliveryStatuses'],
    ['components.schemas.Email.properties.status', 'emailStatuses'],
    ['components.schemas.Email.properties.template', 'emailTemplates'],
    ['components.schemas.Status.properties.rate_limits.properties.plan', 'plans'],
    ['components.schemas.LicenseBatch.properties.status', 'licenseBatchStatuses'],
    ['components.schemas.Export.properties.status', 'exportStatuses'],
    ['components.schemas.LicenseBatch.properties.results.items.properties.status', 'licenseBatchItemStatuses'],
  ])('%s is %s', (path, vocabulary) => {
    expect(enums.get(path)).toEqual([...vocabularies[vocabulary]]);
  });

  it('takes the list filters of licences and checkout sessions from the vocabularies', () => {
    const statusOf = (path: string) =>
      (doc.paths as Record<string, { get: { parameters: { name: string; schema: { enum?: string[] } }[] } }>)[
        path
      ].get.parameters.find((p) => p.name === 'status')!.schema.enum;
    expect(statusOf('/api/v1/licenses')).toEqual([...licenseStatuses]);
    expect(statusOf('/api/v1/checkout')).toEqual([...checkoutStatuses]);
  });

  it('shows the policy with exactly the declared fields, ranges and meanings, in answers and in requests', () => {
    for (const name of ['Policy', 'PolicyInput']) {
      const properties = schema(name).properties as Record<string, Record<string, unknown>>;
      expect(Object.keys(properties)).toEqual(policyFields);
      for (const f of policyFields) {
        const rule = policyRules[f];
        const field = properties[f];
        const bare = (field.anyOf as Record<string, unknown>[] | undefined)?.[0] ?? field;
        expect(field.description ?? bare.description).toBe(rule.description);
        if (rule.kind === 'int') {
          expect(bare.minimum).toBe(rule.min);
          if (name === 'PolicyInput') expect(bare.maximum).toBe(rule.max);
          expect(!!field.anyOf).toBe(rule.nullable);
        }
        if (rule.kind === 'bool') expect(bare.type).toBe('boolean');
      }
    }
  });

  it('shows the licence key in the form keys are issued: six groups, with a key whose check characters are right', () => {
    const key = schema('License').properties.key as { anyOf: { pattern: string }[]; examples: string[] };
    expect(key.examples).toEqual([EXAMPLE_LICENSE_KEY]);
    // Issued keys, or keys imported from another system as they were.
    expect(key.anyOf.map((a) => a.pattern)).toEqual([LICENSE_KEY_PATTERN, FOREIGN_KEY_PATTERN]);
    expect(EXAMPLE_LICENSE_KEY.split('-')).toHaveLength(6);
    expect(parseLicenseKey(EXAMPLE_LICENSE_KEY)).toEqual({ ok: true, key: EXAMPLE_LICENSE_KEY });
    for (let i = 0; i < 20; i++) expect(generateLicenseKey()).toMatch(new RegExp(LICENSE_KEY_PATTERN));
  });
});

// ---- the stores --------------------------------------------------------------------------------

describe('the stores', () => {
  const conn = mongoose.createConnection(); // never connected: the schemas only
  afterAll(() => conn.close());
  const enumOf = (model: Model<never>, path: string) =>
    (model.schema.path(path) as unknown as { enumValues: string[] }).enumValues;

  it('refuse any word outside its vocabulary (mongoose enum validators)', () => {
    const license = licenseModels(conn);
    const checkout = checkoutModels(conn);
    const account = accountModels(conn);
    const deliveries = deliveryModel(conn);
    const emails = emailModel(conn);
    const stored = (m: unknown, path: string) => enumOf(m as Model<never>, path);
    expect(stored(license.License, 'status')).toEqual([...storedLicenseStatuses]);
    expect(stored(checkout.Session, 'status')).toEqual([...checkoutStatuses]);
    expect(stored(checkout.Session, 'refund_action')).toEqual([...refundActions]);
    expect(stored(account.Account, 'plan')).toEqual([...plans]);
    expect(stored(account.ApiKey, 'scope')).toEqual([...keyScopes]);
    expect(stored(deliveries, 'status')).toEqual([...deliveryStatuses]);
    expect(stored(emails, 'status')).toEqual([...emailStatuses]);
    expect(stored(emails, 'template')).toEqual([...emailTemplates]);
    const releases = releaseModel(conn);
    expect(stored(releases, 'channel')).toEqual([...releaseChannels]);
    expect(stored(releases, 'status')).toEqual([...releaseStatuses]);
    const artifact = (releases.schema.path('artifacts') as unknown as { schema: Model<never>['schema'] }).schema;
    expect(stored({ schema: artifact }, 'platform')).toEqual([...artifactPlatforms]);
    expect(stored({ schema: artifact }, 'arch')).toEqual([...artifactArchs]);
  });
});

// ---- the licence policy, declared once ---------------------------------------------------------

describe('the licence policy', () => {
  const sample: Policy = {
    duration_days: 30,
    max_activations: null,
    grace_days: 7,
    require_activation: true,
    validate_keys_see_email: true,
    refund_action: 'suspend',
    lease_seconds: 300,
    entitlements: ['pdf-export', 'seats.10'],
    customer_deactivations_per_30_days: 5,
    payment_grace_days: 7,
    max_file_ttl_days: 14,
    expiration_strategy: 'maintain_access',
  };

  it('has a default for every field, and the declared values of each kind', () => {
    expect(Object.keys(DEFAULT_POLICY)).toEqual(policyFields);
    expect(Object.keys(sample).sort()).toEqual([...policyFields].sort());
    for (const f of policyFields) expect(DEFAULT_POLICY[f]).toEqual(policyRules[f].default);
  });

  it('goes through the contract and the REST answer unchanged, every field in its declared order', () => {
    expect(withPolicyDefaults(policyToContract(sample))).toEqual(sample);
    expect(Object.keys(policyJson(policyToContract(sample)))).toEqual(policyFields);
    expect(policyJson(policyToContract(sample))).toEqual(sample);
    expect(policyJson(undefined)).toEqual(DEFAULT_POLICY);
    // A licence stored before refund_action existed reads as its default.
    const { refund_action: _, entitlements: __, expiration_strategy: ___, ...older } = sample;
    expect(policyJson(policyToContract(older))).toEqual({
      ...sample,
      refund_action: 'revoke',
      entitlements: [],
      expiration_strategy: 'restrict',
    });
  });

  it('is accepted by the REST shape and the product service at its bounds, and refused just past them', () => {
    const fields = policyInput.shape as Record<string, { kind: string; min?: number; max?: number; values?: string[] }>;
    expect(Object.keys(fields)).toEqual(policyFields);
    const base = policyToContract({ ...DEFAULT_POLICY, duration_days: 30 });
    for (const f of policyFields) {
      const rule = policyRules[f];
      if (rule.kind === 'int') {
        expect([fields[f].min, fields[f].max]).toEqual([rule.min, rule.max]);
        for (const ok of [rule.min, rule.max]) expect(checkPolicy({ ...base, [f]: ok })[f]).toBe(ok);
        for (const bad of [rule.min - 1, rule.max + 1])
          expect(() => checkPolicy({ ...base, [f]: bad })).toThrow(`policy.${f} must be a whole number`);
      }
      if (rule.kind === 'enum') {
        expect(fields[f].values).toEqual(rule.values);
        for (const ok of rule.values) expect(checkPolicy({ ...base, [f]: ok })[f]).toBe(ok);
        expect(checkPolicy({ ...base, [f]: '' })[f]).toBe(rule.default);
        expect(() => checkPolicy({ ...base, [f]: 'neither' })).toThrow(`policy.${f} must be one of`);
      }
      if (rule.kind === 'entitlements') {
        expect(fields[f].kind).toBe('entitlements');
        const most = Array.from({ length: rule.max }, (_, i) => `code-${i}`);
        expect(checkPolicy({ ...base, [f]: most })[f]).toEqual(most);
        expect(checkPolicy({ ...base, [f]: [] })[f]).toEqual([]);
        expect(() => checkPolicy({ ...base, [f]: [...most, 'one-more'] })).toThrow(`at most ${rule.max}`);
        expect(() => checkPolicy({ ...base, [f]: ['Bad'] })).toThrow('"Bad" is not an entitlement code');
        expect(() => checkPolicy({ ...base, [f]: ['a', 'a'] })).toThrow('names "a" twice');
      }
    }
  });
});

// ---- the docs ----------------------------------------------------------------------------------

describe('the docs', () => {
  const api = read('docs', 'api.md');
  const readme = read('README.md');

  it("docs/api.md's policy table has the declared fields, in order, with their defaults and ranges", () => {
    const section = api.slice(api.indexOf('**Licence policy**'));
    const rows = section
      .slice(0, section.indexOf('\n\n', section.indexOf('| field |')))
      .split('\n')
      .filter((l) => /^\| `/.test(l))
      .map((l) => l.split('|').map((c) => c.trim()));
    expect(rows.map((r) => r[1])).toEqual(policyFields.map((f) => `\`${f}\``));
    for (const [, field, byDefault, range] of rows) {
      const rule = policyRules[field.slice(1, -1) as keyof typeof policyRules];
      expect(byDefault).toBe(`\`${JSON.stringify(rule.default).replace(/^"|"$/g, '')}\``);
      const expected =
        rule.kind === 'int'
          ? `${rule.min}–${rule.max.toLocaleString('en')}${rule.nullable ? ' or null' : ''}`
          : rule.kind === 'enum'
            ? rule.values.map((v) => `\`${v}\``).join(', ')
            : rule.kind === 'entitlements'
              ? `up to ${rule.max} codes`
              : '';
      expect([field, range]).toEqual([field, expected]);
    }
  });

  it("docs/api.md's validation table gives every code and next action, and no other", () => {
    const table = api.slice(api.indexOf('| # | check |'));
    const rows = table
      .slice(0, table.indexOf('\n\n'))
      .split('\n')
      .filter((l) => /^\| \d+ \|/.test(l))
      .map((l) => l.split('|').map((c) => c.trim()));
    const word = (cell: string) => /`([a-z_]+)`/.exec(cell)![1];
    expect(new Set(rows.map((r) => word(r[3])))).toEqual(new Set(validationCodes));
    expect(new Set(rows.map((r) => word(r[5])))).toEqual(new Set(nextActions));
  });

  it('gives every word list of a vocabulary in the README and docs whole', () => {
    // Lists such as `--plan free\|pro\|enterprise` or `status: pending\|delivered\|failed`.
    const docs = [readme, ...['api.md', 'operations.md', 'architecture.md'].map((f) => read('docs', f))];
    // A list after a family (`license.created|revoked`) names event types: each must be one.
    const families = docs.flatMap((text) =>
      [...text.matchAll(/\b([a-z_]+)\.([a-z_]+(?:\\?\|[a-z_]+)+)/g)].flatMap((m) =>
        m[2].split(/\\?\|/).map((w) => `${m[1]}.${w}`),
      ),
    );
    expect(families.filter((t) => !(eventTypes as readonly string[]).includes(t))).toEqual([]);
    const lists = docs.flatMap((text) =>
      [...text.matchAll(/(?<![a-z_.|\\])[a-z_]+(?:\\?\|[a-z_]+)+/g)].map((m) => m[0].split(/\\?\|/)),
    );
    // A list that is a whole vocabulary is no part of another that shares words with it.
    const partial = lists.filter(
      (words) =>
        !nameOf(words) &&
        Object.values(vocabularies).some(
          (list) => words.filter((w) => list.includes(w)).length >= 2 && words.join() !== list.join(),
        ),
    );
    expect(lists.filter((words) => nameOf(words)).length).toBeGreaterThanOrEqual(4);
    expect(partial).toEqual([]);
  });

  it("docs/api.md's example licence key is a well-formed key", () => {
    const example = /\*\*Key format\.\*\*[^`]*`([0-9A-Z-]+)`/.exec(api)![1];
    expect(parseLicenseKey(example)).toEqual({ ok: true, key: example });
  });
});
