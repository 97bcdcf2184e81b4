import {
  ARTIFACT_SIGNATURE_MAX_LENGTH,
  RELEASE_NOTES_MAX_LENGTH,
  RELEASE_VERSION_MAX_LENGTH,
  artifactArchs,
  artifactPlatforms,
  releaseChannels,
  roleCovers,
  type Artifact,
  type Product,
  type Release,
  type ReleaseRefusal,
} from '@licensing/proto';
import { html, joinHtml, nothing, type Html } from '../kit/template';
import type { FormErrors } from './context';
import { layout } from './pages';
import { ENTITLEMENTS_TEXT_MAX } from './product-views';
import type { DashboardSession } from './session';
import {
  badge,
  confirmForm,
  csrfInput,
  date,
  empty,
  formError,
  input,
  notice,
  pager,
  postButton,
  select,
  table,
  textarea,
} from './widgets';

// The pages of /dashboard/products/{id}/releases (releases.ts registers their routes): a product's
// releases with their files and download counts, the new release form, each release's actions and,
// for a draft, the upload form the dashboard's script sends to the gateway with an upload grant
// (assets.ts); and the section of a licence's page that lists the releases it may download.

/** What the new release form holds, as typed (a refused form comes back as it was). */
export interface ReleaseForm {
  version: string;
  /** '' = from the version's pre-release tag. */
  channel: string;
  notes: string;
  entitlements: string;
}

export const blankReleaseForm: ReleaseForm = { version: '', channel: '', notes: '', entitlements: '' };

/** Bytes as people read them: 512 B, 1.5 KiB, 48.2 MiB. */
export function fileSize(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let n = bytes;
  let unit = 0;
  while (n >= 1024 && unit < units.length - 1) {
    n /= 1024;
    unit++;
  }
  return unit === 0 ? `${n} B` : `${n.toFixed(1)} ${units[unit]}`;
}

/** A file's SHA-256, its first 12 digits shown (the whole in the title, to compare). */
const shortSha = (sha256: string): Html => html`<code title="${sha256}">${sha256.slice(0, 12)}…</code>`;

function fileList(files: Artifact[], withDownloads: boolean): Html {
  if (!files.length) return html`<span class="muted">no files</span>`;
  return html`<ul class="files">${files.map(
    (a) =>
      html`<li data-filename="${a.filename}"><code>${a.filename}</code> <span class="muted">${a.platform}/${a.arch}, ${fileSize(a.size)}</span> ${shortSha(a.sha256)}${withDownloads ? html` <span data-testid="downloads">${a.downloads} ${a.downloads === 1 ? 'download' : 'downloads'}</span>` : nothing}</li>`,
  )}</ul>`;
}

const options = (values: readonly string[]): [string, string][] => values.map((v): [string, string] => [v, v]);

/**
 * A draft's upload form. Hidden until the dashboard's script shows it (an upload needs it: the file
 * goes to the gateway with a grant the form asks for first); without it the page says how else.
 */
function uploadForm(s: DashboardSession, base: string, r: Release): Html {
  const id = (name: string) => `${name}-${r.id}`;
  return html`<p class="muted" data-upload-fallback>Uploading from this page needs JavaScript; or send the file with <code>PUT /api/v1/releases/${r.id}/artifacts/{filename}</code>.</p>
<form method="post" action="${base}/${r.id}/upload-grant" class="inline upload" data-upload data-reload="${base}" hidden>
  ${csrfInput(s)}
  <div class="field"><label for="${id('file')}">File</label><input id="${id('file')}" type="file" required></div>
  <div class="field"><label for="${id('platform')}">Platform</label><select id="${id('platform')}" name="platform">${options(artifactPlatforms).map(([v, t]) => html`<option value="${v}"${v === 'any' ? ' selected' : ''}>${t}</option>`)}</select></div>
  <div class="field"><label for="${id('arch')}">Architecture</label><select id="${id('arch')}" name="arch">${options(artifactArchs).map(([v, t]) => html`<option value="${v}"${v === 'any' ? ' selected' : ''}>${t}</option>`)}</select></div>
  <div class="field"><label for="${id('signature')}">Signature <small>(optional: EdDSA, minisign, …)</small></label><input id="${id('signature')}" name="signature" maxlength="${ARTIFACT_SIGNATURE_MAX_LENGTH}" autocomplete="off"></div>
  <div><button type="submit">Upload file</button></div>
  <div class="upload-progress"><progress max="100" value="0" data-testid="upload-progress" hidden></progress> <span data-upload-status role="status" aria-live="polite"></span></div>
</form>`;
}

function actionsOf(s: DashboardSession, base: string, r: Release): Html {
  const at = `${base}/${r.id}`;
  const buttons = [
    r.status === 'draft' ? postButton(s, `${at}/publish`, 'Publish') : undefined,
    r.status !== 'yanked' ? postButton(s, `${at}/yank`, 'Yank', 'danger') : undefined,
    r.status === 'draft' ? postButton(s, `${at}/delete`, 'Delete draft', 'danger') : undefined,
  ].filter((b): b is Html => b !== undefined);
  return buttons.length ? html`<div class="button-row">${joinHtml(buttons, ' ')}</div>` : nothing;
}

function releaseRows(s: DashboardSession, base: string, releases: Release[], mayChange: boolean): Html[] {
  return releases.map(
    (r) =>
      html`<tr data-release-id="${r.id}" data-release-version="${r.version}"><td><strong>${r.version}</strong>${r.notes ? html`<details><summary>Notes</summary><p class="notes">${r.notes}</p></details>` : nothing}</td><td>${r.channel}</td><td>${badge(r.status)}</td><td>${r.published_at ? date(r.published_at) : html`<span class="muted">not yet</span>`}${r.yanked_at ? html`<br><span class="muted">yanked ${date(r.yanked_at)}</span>` : nothing}</td><td>${fileList(r.artifacts, true)}${
        r.entitlements.length
          ? html`<p class="muted">Needs ${joinHtml(
              r.entitlements.map((e) => html`<code>${e}</code>`),
              ' ',
            )}</p>`
          : nothing
      }</td><td>${mayChange ? actionsOf(s, base, r) : nothing}</td></tr>${mayChange && r.status === 'draft' ? html`<tr class="upload-row" data-upload-for="${r.id}"><td colspan="6">${uploadForm(s, base, r)}</td></tr>` : nothing}`,
  );
}

function createSection(s: DashboardSession, base: string, form: ReleaseForm, errors?: FormErrors): Html {
  const channels: [string, string][] = [['', 'From the version (1.0.0-beta.1: beta)'], ...options(releaseChannels)];
  return html`<section class="card" aria-labelledby="new-release-title">
  <h2 id="new-release-title">New release</h2>
  <p class="muted">A draft until you publish it: upload its files first. Published releases are offered to the licences that may have them.</p>
  ${formError(errors)}
  <form method="post" action="${base}" novalidate>
    ${csrfInput(s)}
    <div class="form-grid">
    ${input({ name: 'version', label: 'Version', value: form.version, errors, hint: '(Semantic Versioning: 1.4.2, 2.0.0-beta.1)', attrs: html`required maxlength="${RELEASE_VERSION_MAX_LENGTH}" autocomplete="off"` })}
    ${select({ name: 'channel', label: 'Channel', options: channels, value: form.channel, errors })}
    ${textarea({ name: 'entitlements', label: 'Entitlements a licence needs', value: form.entitlements, errors, hint: '(feature codes, separated by commas, spaces or lines; empty: any valid licence)', attrs: html`maxlength="${ENTITLEMENTS_TEXT_MAX}"` })}
    ${textarea({ name: 'notes', label: 'Release notes', value: form.notes, errors, hint: '(optional)', attrs: html`maxlength="${RELEASE_NOTES_MAX_LENGTH}"` })}
    </div>
    <p><button type="submit">Create draft</button></p>
  </form>
</section>`;
}

/** What a product's Releases page shows, and the refused form it shows again. */
export interface ReleasesData {
  product: Product;
  releases: Release[];
  after: string;
  next: string;
  form: ReleaseForm;
  errors?: FormErrors;
  notice?: string;
  error?: string;
}

/** A product's releases, newest version first, with their files, actions and the new release form. */
export function releasesPage(s: DashboardSession, d: ReleasesData): Html {
  const p = d.product;
  const base = `/dashboard/products/${p.id}/releases`;
  const mayChange = roleCovers(s.role, 'developer');
  const list = d.releases.length
    ? html`${table(['Version', 'Channel', 'Status', 'Published', 'Files', html`<span class="sr-only">Actions</span>`], releaseRows(s, base, d.releases, mayChange))}${pager(base, {}, d.after, d.next)}`
    : empty(
        d.after
          ? html`No more releases. <a href="${base}">Back to the first page</a>.`
          : 'No releases yet. Create a draft below, upload its files, then publish it.',
      );
  return layout(
    `Releases of ${p.name}`,
    html`${notice(d.notice)}${d.error ? html`<p class="error" role="alert">${d.error}</p>` : nothing}
<p class="muted"><a href="/dashboard/products/${p.id}">${p.name}</a>: its versions, newest first. Apps find them through the update feeds (<code>GET /api/v1/products/${p.id}/updates</code>); a yanked release is never offered again.</p>
${list}
${mayChange ? createSection(s, base, d.form, d.errors) : html`<p class="muted">Your role (${s.role}) reads releases; creating, uploading and publishing them needs developer or above.</p>`}`,
    s,
    '/dashboard/products',
  );
}

/** How the dashboard words yanking and deleting (each confirmed first). */
const CONFIRMS = {
  yank: {
    verb: 'Yank',
    consequence: 'It is withdrawn for good: never offered again, and its downloads are refused. This cannot be undone.',
  },
  delete: { verb: 'Delete', consequence: 'The draft and its files are removed. This cannot be undone.' },
} as const;

/** The confirmation of yanking a release or deleting a draft. */
export const releaseConfirmPage = (s: DashboardSession, p: Product, r: Release, action: keyof typeof CONFIRMS): Html =>
  layout(
    `${CONFIRMS[action].verb} release?`,
    confirmForm(s, {
      action: `/dashboard/products/${p.id}/releases/${r.id}/${action}`,
      question: html`${CONFIRMS[action].verb} ${p.name} <strong>${r.version}</strong>?`,
      consequence: CONFIRMS[action].consequence,
      button: `${CONFIRMS[action].verb} release`,
      danger: true,
      back: `/dashboard/products/${p.id}/releases`,
    }),
    s,
    '/dashboard/products',
  );

/** What a licence may download: its releases, why it may have none, or that the answer is missing for now. */
export type LicenseDownloads = { releases: Release[] } | { refusal: ReleaseRefusal } | { unavailable: true };

/** The section of a licence's page: the published releases it may download, newest version first. */
export function licenseReleasesSection(d: LicenseDownloads): Html {
  const body =
    'unavailable' in d
      ? empty('The releases cannot be read just now. Reload the page in a moment.')
      : 'refusal' in d
        ? html`<p data-testid="release-refusal">${badge(d.refusal.code)} ${d.refusal.detail}</p>`
        : d.releases.length
          ? table(
              ['Version', 'Channel', 'Published', 'Files'],
              d.releases.map(
                (r) =>
                  html`<tr data-release-version="${r.version}"><td><strong>${r.version}</strong></td><td>${r.channel}</td><td>${date(r.published_at)}</td><td>${fileList(r.artifacts, false)}</td></tr>`,
              ),
            )
          : empty('None: no published release of its product is open to this licence.');
  return html`<section aria-labelledby="downloads-title">
  <h2 id="downloads-title">Releases it may download</h2>
  ${body}
</section>`;
}
