import { newId } from '@licensing/runtime';
import { eventually } from '../../../../test/support/eventually';
import { startCheckout, type RunningCheckout } from './running-checkout';

// An archived product in the checkout service (real FerretDB and NATS, the product and licence services
// faked): a new session for it is refused (409, naming why, nothing stored or published), while a
// session opened before it was archived is still paid and completed with its licence (refusing it
// would keep the buyer's money and give nothing for it). Unarchived, it sells again.

let c: RunningCheckout;
const account = newId('acct');

beforeAll(async () => {
  c = await startCheckout();
});

afterAll(async () => {
  await c?.stop();
});

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a refusal, but the call succeeded');
    },
    (e: unknown) => e as { code: string; message: string },
  );

it('refuses a new session for an archived product (409 naming why); unarchived, it sells again', async () => {
  const product = c.product(account);
  product.archived_at = '2026-12-07T10:00:00.000Z';
  const refused = await failure(c.api.createSession(c.sessionRequest(account, product.id)));
  expect(refused).toMatchObject({ code: 'conflict', message: expect.stringContaining('archived') });
  expect(refused.message).toContain('sells nothing');
  expect(
    c.events.all().filter((e) => e.type === 'checkout.created' && JSON.stringify(e.data).includes(product.id)),
  ).toEqual([]);

  product.archived_at = '';
  const opened = await c.api.createSession(c.sessionRequest(account, product.id));
  expect(opened).toMatchObject({ status: 'open', product_id: product.id });
});

it('completes a session opened before the product was archived, with its licence', async () => {
  const product = c.product(account);
  const opened = await c.api.createSession(c.sessionRequest(account, product.id));
  product.archived_at = '2026-12-07T10:00:00.000Z';
  const { form_token } = await c.pages.getPage({ session_id: opened.id, receipt: '', issue_form_token: true });
  const paid = await c.pages.pay({
    session_id: opened.id,
    form_token,
    receipt: '',
    email: 'buyer@example.com',
    card: '4242 4242 4242 4242',
  });
  expect(paid.outcome).toBe('paid');
  const done = await eventually(async () => {
    const s = await c.api.getSession({ account_id: account, id: opened.id });
    expect(s).toMatchObject({ status: 'complete', license_key: expect.stringMatching(/.+/) });
    return s;
  });
  expect(done.product_id).toBe(product.id);
  expect(c.licenses.requestsTo('createLicense').at(-1)).toMatchObject({ product_id: product.id });
});
