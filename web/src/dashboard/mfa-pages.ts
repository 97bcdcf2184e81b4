import { errorBox, layout } from './pages';
import { html, type Html } from '../kit/template';
import type { DashboardSession } from './session';
import { csrfInput } from './widgets';

// The pages of two-factor sign-in (mfa.ts serves them): the sign-in's code form, and Settings →
// Two-factor sign-in (its state, enrolling with a QR code, the recovery codes shown once, turning it off).

export function codePage(csrf: string, error?: string): Html {
  return layout(
    'Two-factor sign-in',
    html`${errorBox(error)}
<form method="post" action="/dashboard/signin/code" class="card narrow">
  <input type="hidden" name="_csrf" value="${csrf}">
  <label for="code">The 6-digit code from your authenticator app</label>
  <input id="code" name="code" autocomplete="one-time-code" inputmode="numeric" required maxlength="20" autofocus>
  <p class="muted">Lost your phone? Type one of your recovery codes instead (each works once).</p>
  <button type="submit">Sign in</button>
  <p><a href="/dashboard/signin">Start again</a></p>
</form>`,
  );
}

export interface MfaState {
  enabled: boolean;
  recoveryCodesLeft: number;
  /** The account requires it (then it cannot be turned off). */
  required: boolean;
}

export function mfaPage(s: DashboardSession, state: MfaState, opts: { error?: string; notice?: string } = {}): Html {
  const enrolNotice = s.mustEnrolMfa
    ? html`<p class="notice" role="status">${s.accountName} requires two-factor sign-in: set it up to go on.</p>`
    : '';
  const body = state.enabled
    ? html`<p><strong>On.</strong> Signing in asks for a code from your authenticator app. ${state.recoveryCodesLeft} of 10 recovery codes left.</p>
${
  state.required
    ? html`<p class="muted">${s.accountName} requires it of every member, so it cannot be turned off.</p>`
    : html`<form method="post" action="/dashboard/settings/mfa/disable" class="inline">
  ${csrfInput(s)}
  <div><label for="password">Your password</label><input id="password" name="password" type="password" autocomplete="current-password" required maxlength="200"></div>
  <button type="submit" class="danger">Turn off</button>
</form>`
}`
    : html`<p><strong>Off.</strong> With it on, signing in also asks for a code from an authenticator app on your phone (1Password, Google Authenticator, Authy…).</p>
<form method="post" action="/dashboard/settings/mfa/enrol">${csrfInput(s)}<button type="submit">Set up two-factor sign-in</button></form>`;
  return layout(
    'Two-factor sign-in',
    html`${errorBox(opts.error)}${opts.notice ? html`<p class="notice" role="status">${opts.notice}</p>` : ''}${enrolNotice}
<section class="card">${body}</section>
<p><a href="/dashboard/settings">Back to Settings</a></p>`,
    s,
    '/dashboard/settings',
  );
}

/** The secret to scan (a QR code of the otpauth URI) or type, and the form for the app's first code. */
export function enrolPage(
  s: DashboardSession,
  enrolment: { secret: string; otpauthUri: string; qrDataUrl: string },
  error?: string,
): Html {
  return layout(
    'Set up two-factor sign-in',
    html`${errorBox(error)}
<section class="card narrow">
  <p>1. Scan this code with your authenticator app:</p>
  <img src="${enrolment.qrDataUrl}" alt="QR code of your two-factor secret" width="200" height="200" data-testid="mfa-qr">
  <p>Or type this secret into it: <code data-testid="mfa-secret">${enrolment.secret}</code></p>
  <form method="post" action="/dashboard/settings/mfa/confirm">
    ${csrfInput(s)}
    <input type="hidden" name="secret" value="${enrolment.secret}">
    <input type="hidden" name="otpauth_uri" value="${enrolment.otpauthUri}">
    <label for="code">2. The 6-digit code the app shows</label>
    <input id="code" name="code" autocomplete="one-time-code" inputmode="numeric" required maxlength="20">
    <button type="submit">Turn on</button>
  </form>
</section>`,
    s,
    '/dashboard/settings',
  );
}

/** The ten recovery codes, this once. */
export function recoveryCodesPage(s: DashboardSession, codes: string[]): Html {
  return layout(
    'Two-factor sign-in is on',
    html`<section class="card secret" role="status">
  <h2>Your recovery codes</h2>
  <p><strong>Save them now: you will not see them again.</strong> Each one signs you in once if you lose your phone.</p>
  <ul class="recovery-codes" data-testid="recovery-codes">${codes.map((c) => html`<li><code>${c}</code></li>`)}</ul>
</section>
<p><a href="/dashboard">Go on to the dashboard</a></p>`,
    s,
    '/dashboard/settings',
  );
}
