import {
  checkRow,
  endpointForm,
  firstDifference,
  policyKey,
  recordReasons,
} from '../../src/transfer/domain/import-rows';

// An export's lines other than licences, as an import reads them: products keep a recurring
// price, webhook endpoints are made again, and the records not imported carry why.

const now = new Date('2026-03-01T12:00:00Z');

describe('an export line, checked for import', () => {
  it('a product keeps its recurring price: interval, interval_count and trial_days', () => {
    expect(
      checkRow(
        {
          type: 'product',
          name: 'Monthly',
          price: { amount: 900, currency: 'EUR', interval: 'month', interval_count: 3, trial_days: 7 },
        },
        now,
      ),
    ).toMatchObject({
      kind: 'product',
      product: { price: { amount: 900, currency: 'EUR', interval: 'month', interval_count: 3, trial_days: 7 } },
    });
    expect(
      checkRow({ type: 'product', name: 'Once', price: { amount: 900, currency: 'EUR', interval: null } }, now),
    ).toMatchObject({ kind: 'product', product: { price: { amount: 900, currency: 'EUR' } } });
    expect(
      checkRow(
        { type: 'product', name: 'Bad', price: { amount: 900, currency: 'EUR', interval: 'month', trial_days: 1.5 } },
        now,
      ),
    ).toEqual({ kind: 'rejected', message: 'price.interval_count and price.trial_days must be whole numbers' });
  });

  it('a webhook endpoint: its url, events, description and enabled (id and times left behind)', () => {
    const line = {
      type: 'webhook_endpoint',
      id: 'we_01JD8Z3K6Q2W4E5R6T7Y8V9X0P',
      url: ' https://crm.example/hooks ',
      events: ['license.updated', 'license.created', 'license.created'],
      description: null,
      enabled: false,
      created_at: '2026-01-01T00:00:00.000Z',
    };
    const checked = checkRow(line, now);
    expect(checked).toEqual({
      kind: 'webhook_endpoint',
      endpoint: {
        url: 'https://crm.example/hooks',
        events: ['license.created', 'license.updated'],
        description: '',
        enabled: false,
      },
    });
    // Compared by those four: the same endpoint with its events in another order is the same.
    const form = endpointForm({
      url: 'https://crm.example/hooks',
      events: ['license.updated', 'license.created'],
      description: '',
      enabled: false,
    });
    expect(checked.kind === 'webhook_endpoint' && endpointForm(checked.endpoint)).toBe(form);
    expect(
      endpointForm({
        url: 'https://crm.example/hooks',
        events: ['license.created', 'license.updated'],
        description: '',
        enabled: true,
      }),
    ).not.toBe(form);
    // Absent enabled: enabled.
    expect(checkRow({ type: 'webhook_endpoint', url: 'https://x.example', events: ['*'] }, now)).toMatchObject({
      endpoint: { enabled: true, description: '' },
    });
  });

  it('a webhook endpoint of the wrong shape is rejected, naming the field', () => {
    const base = { type: 'webhook_endpoint', url: 'https://x.example', events: ['*'] };
    expect(checkRow({ ...base, url: '' }, now)).toEqual({
      kind: 'rejected',
      message: 'webhook_endpoint: url must be a URL of at most 2048 characters',
    });
    expect(checkRow({ ...base, events: [] }, now)).toEqual({
      kind: 'rejected',
      message: 'webhook_endpoint: events must be a list of event types',
    });
    expect(checkRow({ ...base, events: [1] }, now)).toMatchObject({ kind: 'rejected' });
    expect(checkRow({ ...base, description: 5 }, now)).toEqual({
      kind: 'rejected',
      message: 'webhook_endpoint: description must be a string',
    });
    expect(checkRow({ ...base, enabled: 'yes' }, now)).toEqual({
      kind: 'rejected',
      message: 'webhook_endpoint: enabled must be true or false',
    });
  });

  it('checkout sessions, subscriptions and types of a newer release are records, each with why it is not imported', () => {
    expect(checkRow({ type: 'checkout_session', id: 'cs_1' }, now)).toEqual({
      kind: 'record',
      type: 'checkout_session',
      reason: recordReasons.checkout_session,
    });
    expect(checkRow({ type: 'subscription', id: 'sub_1' }, now)).toEqual({
      kind: 'record',
      type: 'subscription',
      reason: recordReasons.subscription,
    });
    expect(recordReasons.checkout_session).toMatch(/^checkout_session: not imported: /);
    expect(recordReasons.subscription).toMatch(/^subscription: not imported: /);
    expect(checkRow({ type: 'coupon' }, now)).toEqual({
      kind: 'record',
      type: 'coupon',
      reason: 'coupon: not imported: not a type this installation imports (an export of a newer release?)',
    });
  });
});

describe("a licence line's own policy", () => {
  const key = '3f2b8c1e-7d4a-4e2b-9c1f-0a1b2c3d4e5f';
  const line = (policy: unknown) => ({ key, product_name: 'App', customer_email: 'a@example.com', policy });

  it('is kept as the line gives it (null: no limit), and a product line reads one the same way', () => {
    const policy = {
      duration_days: 365,
      max_activations: null,
      grace_days: 5,
      require_activation: true,
      validate_keys_see_email: false,
      refund_action: 'suspend',
      lease_seconds: null,
      customer_deactivations_per_30_days: 0,
      payment_grace_days: 14,
    };
    expect(checkRow(line(policy), now)).toMatchObject({
      kind: 'license',
      row: {
        policy: {
          duration_days: 365,
          grace_days: 5,
          require_activation: true,
          refund_action: 'suspend',
          customer_deactivations_per_30_days: 0,
          payment_grace_days: 14,
        },
      },
    });
    const row = checkRow(line(policy), now) as unknown as { row: { policy: Record<string, unknown> } };
    expect(row.row.policy).not.toHaveProperty('max_activations'); // unlimited, as in the contract
    expect(checkRow({ type: 'product', name: 'App', policy }, now)).toMatchObject({
      kind: 'product',
      product: { policy: { payment_grace_days: 14, customer_deactivations_per_30_days: 0 } },
    });
    // The row's max_activations rules over its policy's: 0 (no machine) is a row's, never a policy's.
    expect(checkRow({ ...line({ max_activations: 0, grace_days: 0 }), max_activations: 0 }, now)).toMatchObject({
      kind: 'license',
      row: { max_activations: 0, policy: { grace_days: 0 } },
    });
    expect(checkRow(line({ max_activations: 0 }), now)).toMatchObject({ kind: 'rejected' });
    expect(checkRow(line(undefined), now)).toMatchObject({ kind: 'license', row: { key } });
    expect((checkRow(line(undefined), now) as unknown as { row: object }).row).not.toHaveProperty('policy');
  });

  it.each([
    ['not an object', 'policy must be an object'],
    [{ grace_days: 5000 }, 'policy.grace_days must be a whole number from 0 to 365'],
    [{ require_activation: 'yes' }, 'policy.require_activation must be true or false'],
    [{ refund_action: 'keep' }, 'policy.refund_action must be one of'],
    [{ seats: 3 }, 'policy.seats: not a policy field'],
  ])('%p is rejected, naming the field', (policy, message) => {
    expect(checkRow(line(policy), now)).toMatchObject({ kind: 'rejected', message: expect.stringContaining(message) });
  });

  it('counts in the comparison of a row with the licence already there only when the row gives one', () => {
    const base = {
      product_id: 'prod_1',
      customer_email: 'a@example.com',
      status: 'active',
      expires_at: null,
      max_activations: 3,
      metadata: {},
      entitlements: [],
      fingerprints: [],
    };
    const stored = { ...base, policy: policyKey({ max_activations: 3, grace_days: 5, duration_days: 30 }) };
    expect(firstDifference(base, stored)).toBeUndefined();
    expect(
      firstDifference({ ...base, policy: policyKey({ max_activations: 3, grace_days: 5, duration_days: 30 }) }, stored),
    ).toBeUndefined();
    expect(
      firstDifference({ ...base, policy: policyKey({ max_activations: 3, grace_days: 6, duration_days: 30 }) }, stored),
    ).toBe('policy');
  });
});

describe('the text of every field of a row, by the API’s rule', () => {
  const license = {
    key: 'poison-key-0001',
    product_id: 'prod_01JD8Z3K6Q2W4E5R6T7Y8V9X0P',
    customer_email: 'ann@example.com',
  };

  it('a control character in customer_email rejects the row, naming the field and the character', () => {
    expect(checkRow({ ...license, customer_email: 'ann\u0000@example.com' }, now)).toEqual({
      kind: 'rejected',
      message: 'customer_email must not contain control characters or unpaired surrogates (found U+0000)',
    });
    expect(checkRow({ ...license, customer_email: 'ann@exa\u0007mple.com' }, now)).toMatchObject({
      kind: 'rejected',
      message: expect.stringContaining('customer_email must not contain control characters'),
    });
  });

  it('an address the API would refuse is refused here too', () => {
    expect(checkRow({ ...license, customer_email: `${'a'.repeat(70)}@example.com` }, now)).toEqual({
      kind: 'rejected',
      message: 'customer_email must be a valid e-mail address',
    });
  });

  it.each([
    ['a metadata value', { metadata: { note: 'a\u0000b' } }, 'metadata.note'],
    ['a metadata name', { metadata: { 'n\u0001': 'x' } }, 'metadata keys are'],
    ['an entitlement', { entitlements: ['pro\u0000'] }, 'entitlements[0]'],
    ['a fingerprint', { activations: [{ fingerprint: 'fp\u0000' }] }, 'activations[0].fingerprint'],
    ['a machine name', { activations: [{ fingerprint: 'fp', name: 'pc\u0008' }] }, 'activations[0].name'],
    ['a field no row has', { extra: '\u0000' }, 'extra'],
    ['an unpaired surrogate', { customer_email: 'ann\ud800@example.com' }, 'customer_email'],
  ])('%s with a control character rejects the row', (_what, change, field) => {
    const checked = checkRow({ ...license, ...change }, now);
    expect(checked).toMatchObject({ kind: 'rejected', message: expect.stringContaining(field) });
  });

  it('a product line or a webhook endpoint line: one-line fields refuse line breaks, all fields control characters', () => {
    expect(checkRow({ type: 'product', name: 'Pro\nEdition' }, now)).toEqual({
      kind: 'rejected',
      message: 'name must not contain control characters or unpaired surrogates (found U+000A)',
    });
    expect(checkRow({ type: 'product', name: 'Pro', description: 'two\nlines' }, now)).toMatchObject({
      kind: 'product',
    });
    expect(checkRow({ type: 'product', name: 'Pro', description: 'bell\u0007' }, now)).toMatchObject({
      kind: 'rejected',
    });
    expect(
      checkRow({ type: 'webhook_endpoint', url: 'https://example.com/\r\nX: y', events: ['license.created'] }, now),
    ).toMatchObject({ kind: 'rejected', message: expect.stringContaining('webhook_endpoint: url must not contain') });
  });
});
