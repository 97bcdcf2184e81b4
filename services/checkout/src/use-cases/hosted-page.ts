import { createHash, randomBytes } from 'node:crypto';
import type { CheckoutCancelOutcome, CheckoutPageState, CheckoutPayOutcome } from '@licensing/proto';
import { AppError, checkEmail, isId, type Clock } from '@licensing/runtime';
import { successUrlFor, type PaymentProvider } from '../domain/payments';
import { effectiveStatus } from '../domain/session';
import { testCardOf } from '../domain/subscription';
import type { SessionDoc } from '../store/models';
import type { CheckoutStore } from '../store/queries';
import type { Completion } from './completion';

// The hosted checkout page's rules, for the web component that renders it (CheckoutPageService).
//
// The licence key is shown only to the browser that paid: paying gives it a random secret (its
// receipt) whose digest is stored; anyone else who opens the session's URL sees "already paid".
// Form tokens (CSRF) are issued and checked here: a token is good only if this service stored its
// digest for this session, unexpired. Only digests are stored; the secrets go to the browser.

/** A form token is good for an hour (and never past its session's expiry). */
const TOKEN_TTL_MS = 3_600_000;

const hex = (s: string) => createHash('sha256').update(s).digest('hex');
const secret = () => randomBytes(32).toString('base64url');

export interface HostedPageDeps {
  store: CheckoutStore;
  completion: Completion;
  provider: PaymentProvider;
  clock: Clock;
}

/** Where a session stands for its page: open, or why it cannot be paid. */
export type PageState = Exclude<CheckoutPageState, 'paid_here'>;

export const pageStateOf = (s: SessionDoc | null, now: Date): PageState => {
  if (!s) return 'not_found';
  const status = effectiveStatus(s, now);
  return status === 'expired' ? 'expired' : status === 'complete' ? 'complete' : 'open';
};

/** Paid on this page with the test card: Stripe sessions are paid on Stripe's page. */
export const takesCards = (deps: HostedPageDeps, s: SessionDoc): boolean =>
  s.provider !== 'stripe' && deps.provider.takesCardsOnPage;

const load = (deps: HostedPageDeps, id: string) => (isId('cs', id) ? deps.store.findById(id) : Promise.resolve(null));

export async function issueFormToken(deps: HostedPageDeps, s: SessionDoc): Promise<string> {
  const token = secret();
  const until = Math.min(deps.clock.now().getTime() + TOKEN_TTL_MS, s.expires_at.getTime());
  await deps.store.addPageToken(hex(token), s._id, new Date(until));
  return token;
}

export async function formTokenValid(deps: HostedPageDeps, id: string, token: string): Promise<boolean> {
  return isId('cs', id) && !!token && (await deps.store.pageTokenValid(hex(token), id, deps.clock.now()));
}

async function issueReceipt(deps: HostedPageDeps, id: string): Promise<string> {
  const receipt = secret();
  await deps.store.addReceipt(hex(receipt), id, deps.clock.now());
  return receipt;
}

const paidByThisBrowser = async (deps: HostedPageDeps, id: string, receipt: string) =>
  !!receipt && (await deps.store.hasReceipt(hex(receipt), id));

/** The page of a session: the paid page for the browser that paid it, else its state. */
export async function openPage(
  deps: HostedPageDeps,
  id: string,
  receipt: string,
  issueToken: boolean,
  requestId = '',
): Promise<{ state: CheckoutPageState; session: SessionDoc | null; licenseKey: string; formToken: string }> {
  const s = await load(deps, id);
  // The browser that paid sees its key (the licence is issued now if a crash left it pending).
  if (s?.status === 'complete' && (await paidByThisBrowser(deps, s._id, receipt)))
    return { state: 'paid_here', session: s, licenseKey: await deps.completion.issue(s, requestId), formToken: '' };
  const state = pageStateOf(s, deps.clock.now());
  const formToken = state === 'open' && issueToken && takesCards(deps, s!) ? await issueFormToken(deps, s!) : '';
  return { state, session: s, licenseKey: '', formToken };
}

type WithForm = 'invalid_email' | 'declined';
export type PayOutcome =
  | { outcome: 'paid'; receipt: string }
  | { outcome: Exclude<CheckoutPayOutcome, 'paid' | WithForm> }
  | { outcome: WithForm; message: string; session: SessionDoc; formToken: string };

export interface PayForm {
  formToken: string;
  receipt: string;
  email: string;
  card: string;
}

/**
 * Pays an open session with the test card. A double click on the form that paid (same token) is the
 * same buyer: a receipt for this browser too, and the same licence, never a second one.
 */
export async function payOnPage(deps: HostedPageDeps, id: string, form: PayForm, requestId = ''): Promise<PayOutcome> {
  if (!(await formTokenValid(deps, id, form.formToken))) return { outcome: 'form_expired' };
  const token = hex(form.formToken);
  const current = await load(deps, id);
  if (current?.status === 'complete') {
    if (current.paid_with !== token && !(await paidByThisBrowser(deps, id, form.receipt)))
      return { outcome: 'already_paid' };
    return { outcome: 'paid', receipt: await issueReceipt(deps, id) };
  }
  const state = pageStateOf(current, deps.clock.now());
  if (state !== 'open') return { outcome: state === 'complete' ? 'already_paid' : state };
  const s = current!;
  if (!takesCards(deps, s)) return { outcome: 'not_payable_here' };
  let email: string;
  try {
    email = checkEmail('email', form.email);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { outcome: 'invalid_email', message: err.message, session: s, formToken: await issueFormToken(deps, s) };
  }
  const card = form.card.slice(0, 30);
  const charge = await deps.provider.charge({
    sessionId: s._id,
    amount: s.amount,
    currency: s.currency,
    customerEmail: email,
    card,
  });
  if (!charge.ok)
    return {
      outcome: 'declined',
      message: charge.message,
      session: { ...s, customer_email: email },
      formToken: await issueFormToken(deps, s),
    };
  // A recurring price keeps which test card paid: it is billed again at each period end (test clock).
  const testCard = s.recurring ? (testCardOf(card) ?? undefined) : undefined;
  await deps.completion.markPaid(s, { paymentId: charge.paymentId, email, paidWith: token, testCard }); // false when another tab was first
  const paid = await deps.store.findById(s._id);
  if (paid?.status !== 'complete') return { outcome: 'lapsed' };
  // FerretDB may let two tabs both "win" the write: only the form recorded as the payer gets the key.
  if (paid.paid_with !== token) return { outcome: 'already_paid' };
  await deps.completion.issue(paid, requestId);
  return { outcome: 'paid', receipt: await issueReceipt(deps, id) };
}

/**
 * Going back to cancel_url takes the page's form token, as reaching success_url takes paying: a link
 * to /checkout/{id}/cancel that anyone with an account could make up (any http(s) cancel_url) must
 * not turn our address into a redirect to theirs.
 */
export async function cancelOnPage(
  deps: HostedPageDeps,
  id: string,
  formToken: string,
): Promise<{ outcome: CheckoutCancelOutcome; cancelUrl: string }> {
  if (!(await formTokenValid(deps, id, formToken))) return { outcome: 'form_expired', cancelUrl: '' };
  const s = await load(deps, id);
  const state = pageStateOf(s, deps.clock.now());
  if (state !== 'open') return { outcome: state === 'complete' ? 'already_paid' : state, cancelUrl: '' };
  return { outcome: 'cancelled', cancelUrl: s!.cancel_url };
}

/** success_url with our session id: where the paid page sends the buyer. */
export const returnUrlOf = (s: SessionDoc): string => successUrlFor(s.success_url, s._id);
