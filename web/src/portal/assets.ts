import { COPY_JS, CSS } from '../kit/assets';

// The portal's stylesheet and script: the dashboard's shared ones and a few rules of its own, served by
// the portal itself (/portal/assets/…) so its CSP allows nothing else.

export const PORTAL_CSS = `${CSS}
.skip { position:absolute; left:-999px; } .skip:focus { left:1rem; top:.5rem; background:var(--card); padding:.4rem .6rem; z-index:1; }
.key { display:flex; flex-wrap:wrap; gap:.5rem; align-items:center; } .key summary { cursor:pointer; color:var(--accent); }
.key details[open] summary { margin-bottom:.25rem; } .licenses { list-style:none; padding:0; margin:0; display:grid; gap:1rem; }
.licenses li { background:var(--card); border:1px solid var(--line); border-radius:.5rem; padding:1rem 1.25rem; } .licenses h2 { margin-top:0; }
footer { max-width:72rem; margin:0 auto; padding:1rem 1.25rem 2rem; color:var(--muted); font-size:.9rem; }
`;

/**
 * Copy buttons (hidden until this script runs: without it the key is revealed by its <details> and
 * selected by hand), with the result announced in the page's live region.
 */
export const PORTAL_JS = `${COPY_JS}
document.querySelectorAll('button[data-copy][hidden]').forEach(function (b) { b.hidden = false; });
document.addEventListener('click', function (e) {
  var button = e.target.closest('[data-copy]');
  var live = document.getElementById('live');
  if (button && live) setTimeout(function () { live.textContent = button.textContent === 'Copied' ? 'Key copied.' : ''; }, 100);
});
`;
