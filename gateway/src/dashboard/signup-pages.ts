import { h, layout } from './pages';

// The pages after the sign-up form. The form's answer is the same whether the
// e-mail is new or already registered: only the inbox learns which.

export function signUpSentPage(): string {
  return layout(
    'Check your inbox',
    `<div class="card narrow">
  <p>We sent a link to the address you gave. Open it within 24 hours to create your account.</p>
  <p>Nothing arrived after a few minutes? Look in your spam folder, or <a href="/dashboard/signup">sign up again</a>.</p>
  <p>Already have an account? <a href="/dashboard/signin">Sign in</a></p>
</div>`,
  );
}

/** The e-mailed link opens this page; the account is created by its button (a POST), so a mail scanner that follows links creates nothing. */
export function signUpConfirmPage(csrf: string, token: string): string {
  return layout(
    'Create your account',
    `<form method="post" action="/dashboard/signup/confirm" class="card narrow">
  <input type="hidden" name="_csrf" value="${h(csrf)}">
  <input type="hidden" name="token" value="${h(token)}">
  <p>Your e-mail is confirmed. One click and your account is ready.</p>
  <button type="submit">Create my account</button>
</form>`,
  );
}

export function signUpLinkProblemPage(message: string): string {
  return layout(
    'This link cannot be used',
    `<div class="card narrow">
  <p class="error" role="alert">${h(message)}</p>
  <p><a href="/dashboard/signup">Sign up again</a> or <a href="/dashboard/signin">sign in</a>.</p>
</div>`,
  );
}
