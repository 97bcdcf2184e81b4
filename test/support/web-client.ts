import type { Topology } from '../../scripts/lib/topology';
import { mailsTo, signupToken, waitForMail } from './mailbox';

/**
 * A minimal browser stand-in for dashboard tests over plain HTTP: keeps
 * cookies, posts forms, does not follow redirects (tests look at them).
 */
export class WebClient {
  readonly cookies = new Map<string, string>();
  readonly setCookieHeaders: string[] = [];
  /** Sent with every request (e.g. X-Forwarded-For, to act as another client address behind a trusted proxy). */
  readonly headers: Record<string, string> = {};

  /** `topology`: the stack's, whose mail folder holds the sign-up links (needed by signUp only). */
  constructor(
    private readonly base: string,
    private readonly topology?: Topology,
  ) {}

  private remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      this.setCookieHeaders.push(line);
      const [pair] = line.split(';');
      const [name, ...v] = pair.split('=');
      const value = v.join('=');
      if (/Max-Age=0/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async get(path: string) {
    const res = await fetch(`${this.base}${path}`, {
      redirect: 'manual',
      headers: { ...this.headers, cookie: this.cookieHeader() },
    });
    this.remember(res);
    return { status: res.status, location: res.headers.get('location'), headers: res.headers, html: await res.text() };
  }

  async post(path: string, form: Record<string, string>) {
    const res = await fetch(`${this.base}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...this.headers, cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    this.remember(res);
    return { status: res.status, location: res.headers.get('location'), headers: res.headers, html: await res.text() };
  }

  /** The CSRF token of the first form on a page. */
  static csrf(html: string): string {
    const m = /name="_csrf" value="([^"]+)"/.exec(html);
    if (!m) throw new Error('no CSRF token on the page');
    return m[1];
  }

  /** Signs up a new account through the e-mailed link, signed in afterwards; returns its owner's credentials. */
  async signUp(email: string, password = 'correct horse battery staple', accountName = 'Acme Tools') {
    if (!this.topology)
      throw new Error('signUp needs the stack topology (its mail folder): new WebClient(url, stack.topology)');
    const before = (await mailsTo(this.topology, email)).length;
    const form = await this.get('/dashboard/signup');
    const res = await this.post('/dashboard/signup', {
      _csrf: WebClient.csrf(form.html),
      account_name: accountName,
      email,
      password,
    });
    if (res.status !== 303 || res.location !== '/dashboard/signup/sent')
      throw new Error(`sign-up failed with ${res.status}: ${res.html.slice(0, 300)}`);
    const confirmed = await this.confirmSignUp(signupToken(await waitForMail(this.topology, email, before + 1)));
    if (confirmed.status !== 303)
      throw new Error(`sign-up confirmation failed with ${confirmed.status}: ${confirmed.html.slice(0, 300)}`);
    return { email, password };
  }

  /** Opens the e-mailed link and presses its button. */
  async confirmSignUp(token: string) {
    const page = await this.get(`/dashboard/signup/confirm?token=${encodeURIComponent(token)}`);
    return this.post('/dashboard/signup/confirm', { _csrf: WebClient.csrf(page.html), token });
  }

  async signIn(email: string, password: string) {
    const form = await this.get('/dashboard/signin');
    return this.post('/dashboard/signin', { _csrf: WebClient.csrf(form.html), email, password });
  }

  /** Generates an API key on Settings; the secret is read from the page that shows it once. */
  async generateKey(name = 'server', scope = 'full') {
    const settings = await this.get('/dashboard/settings');
    const res = await this.post('/dashboard/settings/keys', { _csrf: WebClient.csrf(settings.html), name, scope });
    const secret = /data-testid="new-key">([^<]+)</.exec(res.html)?.[1];
    return { res, secret };
  }
}
