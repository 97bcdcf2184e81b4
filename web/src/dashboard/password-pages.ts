import { html, type Html } from '../kit/template';
import { errorBox, layout } from './pages';
import type { DashboardSession } from './session';

// The pages of a forgotten password (ask for a link, choose a new password with it) and of changing
// one while signed in (password.ts serves them). After asking, the answer is the same whether the
// e-mail signs in or not: only the inbox learns which.

export function forgotPasswordPage(csrf: string, opts: { error?: string; email?: string } = {}): Html {
  return layout(
    'Forgot your password?',
    html`${errorBox(opts.error)}
<form method="post" action="/dashboard/password/forgot" class="card narrow">
  <input type="hidden" name="_csrf" value="${csrf}">
  <p>Give the e-mail you sign in with: we send it a link to choose a new password, valid for an hour.</p>
  <label for="email">E-mail</label>
  <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${opts.email}">
  <button type="submit">Send the link</button>
  <p><a href="/dashboard/signin">Back to sign-in</a></p>
</form>`,
  );
}

export function resetSentPage(): Html {
  return layout(
    'Check your inbox',
    html`<div class="card narrow">
  <p>If that address signs in here, a link to choose a new password is on its way. It works once, within the hour.</p>
  <p>Nothing arrived after a few minutes? Look in your spam folder, or <a href="/dashboard/password/forgot">ask again</a>.</p>
</div>`,
  );
}

/** The e-mailed link opens this form; the password changes only with its POST (a mail scanner changes nothing). */
export function resetPasswordPage(csrf: string, token: string, error?: string): Html {
  return layout(
    'Choose a new password',
    html`${errorBox(error)}
<form method="post" action="/dashboard/password/reset" class="card narrow">
  <input type="hidden" name="_csrf" value="${csrf}">
  <input type="hidden" name="token" value="${token}">
  <label for="password">New password <small>(at least 10 characters)</small></label>
  <input id="password" name="password" type="password" autocomplete="new-password" required minlength="10" maxlength="200">
  <p class="muted">Every other place you are signed in is signed out.</p>
  <button type="submit">Set the password and sign in</button>
</form>`,
  );
}

export function resetLinkProblemPage(message: string): Html {
  return layout(
    'This link cannot be used',
    html`<div class="card narrow">
  <p class="error" role="alert">${message}</p>
  <p><a href="/dashboard/password/forgot">Ask for a new link</a> or <a href="/dashboard/signin">sign in</a>.</p>
</div>`,
  );
}

export function changePasswordPage(s: DashboardSession, opts: { error?: string; notice?: string } = {}): Html {
  return layout(
    'Your password',
    html`${errorBox(opts.error)}${opts.notice ? html`<p class="notice" role="status">${opts.notice}</p>` : ''}
<form method="post" action="/dashboard/settings/password" class="card narrow">
  <input type="hidden" name="_csrf" value="${s.csrfToken}">
  <input type="hidden" name="username" autocomplete="username" value="${s.userEmail}">
  <label for="current_password">Current password</label>
  <input id="current_password" name="current_password" type="password" autocomplete="current-password" required maxlength="200">
  <label for="new_password">New password <small>(at least 10 characters)</small></label>
  <input id="new_password" name="new_password" type="password" autocomplete="new-password" required minlength="10" maxlength="200">
  <p class="muted">Every other place you are signed in is signed out; this one stays.</p>
  <button type="submit">Change password</button>
  <p><a href="/dashboard/settings">Back to Settings</a></p>
</form>`,
    s,
    '/dashboard/settings',
  );
}
