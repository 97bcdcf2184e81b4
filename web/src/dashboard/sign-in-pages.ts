import { errorBox, layout } from './pages';
import { html, type Html } from '../kit/template';

// The pages of signing in and signing up (sign-in.ts serves them). After the sign-up form, the
// answer is the same whether the e-mail is new or already registered: only the inbox learns which.

export function signInPage(csrf: string, opts: { error?: string; email?: string } = {}): Html {
  return layout(
    'Sign in',
    html`${errorBox(opts.error)}
<form method="post" action="/dashboard/signin" class="card narrow">
  <input type="hidden" name="_csrf" value="${csrf}">
  <label for="email">E-mail</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="${opts.email}">
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  <button type="submit">Sign in</button>
  <p><a href="/dashboard/password/forgot">Forgot your password?</a></p>
  <p>No account yet? <a href="/dashboard/signup">Sign up</a></p>
</form>`,
  );
}

export function signUpPage(
  csrf: string,
  opts: { error?: string; values?: { account_name?: string; email?: string } } = {},
): Html {
  return layout(
    'Create your account',
    html`${errorBox(opts.error)}
<form method="post" action="/dashboard/signup" class="card narrow">
  <input type="hidden" name="_csrf" value="${csrf}">
  <label for="account_name">Company or product name</label>
  <input id="account_name" name="account_name" required maxlength="100" value="${opts.values?.account_name}">
  <label for="email">Your e-mail</label>
  <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${opts.values?.email}">
  <label for="password">Password <small>(at least 10 characters)</small></label>
  <input id="password" name="password" type="password" autocomplete="new-password" required minlength="10" maxlength="200">
  <button type="submit">Create account</button>
  <p>Already have one? <a href="/dashboard/signin">Sign in</a></p>
</form>`,
  );
}

export function signUpSentPage(): Html {
  return layout(
    'Check your inbox',
    html`<div class="card narrow">
  <p>We sent a link to the address you gave. Open it within 24 hours to create your account.</p>
  <p>Nothing arrived after a few minutes? Look in your spam folder, or <a href="/dashboard/signup">sign up again</a>.</p>
  <p>Already have an account? <a href="/dashboard/signin">Sign in</a></p>
</div>`,
  );
}

/** The e-mailed link opens this page; the account is created by its button (a POST), so a mail scanner that follows links creates nothing. */
export function signUpConfirmPage(csrf: string, token: string): Html {
  return layout(
    'Create your account',
    html`<form method="post" action="/dashboard/signup/confirm" class="card narrow">
  <input type="hidden" name="_csrf" value="${csrf}">
  <input type="hidden" name="token" value="${token}">
  <p>Your e-mail is confirmed. One click and your account is ready.</p>
  <button type="submit">Create my account</button>
</form>`,
  );
}

export function signUpLinkProblemPage(message: string): Html {
  return layout(
    'This link cannot be used',
    html`<div class="card narrow">
  <p class="error" role="alert">${message}</p>
  <p><a href="/dashboard/signup">Sign up again</a> or <a href="/dashboard/signin">sign in</a>.</p>
</div>`,
  );
}

/** An invitation's link opens this form: the person's name and password; they join with its POST. */
export function invitationPage(csrf: string, token: string, opts: { error?: string; name?: string } = {}): Html {
  return layout(
    'Join your team',
    html`${errorBox(opts.error)}
<form method="post" action="/dashboard/invitations/accept" class="card narrow">
  <input type="hidden" name="_csrf" value="${csrf}">
  <input type="hidden" name="token" value="${token}">
  <p>You were invited to an account on this dashboard. Tell us your name and choose a password to join.</p>
  <label for="name">Your name</label>
  <input id="name" name="name" autocomplete="name" required maxlength="100" value="${opts.name}">
  <label for="password">Password <small>(at least 10 characters)</small></label>
  <input id="password" name="password" type="password" autocomplete="new-password" required minlength="10" maxlength="200">
  <button type="submit">Join</button>
</form>`,
  );
}

export function invitationProblemPage(message: string): Html {
  return layout(
    'This invitation cannot be used',
    html`<div class="card narrow">
  <p class="error" role="alert">${message}</p>
  <p>Ask whoever invited you to invite you again, or <a href="/dashboard/signin">sign in</a>.</p>
</div>`,
  );
}
