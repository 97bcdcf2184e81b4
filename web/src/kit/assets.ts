// The stylesheet and the copy script the server-rendered surfaces share, served by each surface from
// its own path so the CSP can forbid everything else (no inline script or style).
export const CSS = `
:root { --fg:#1c2430; --muted:#5b6675; --bg:#f6f7f9; --card:#fff; --line:#dde1e7; --accent:#2457d6; --danger:#b42318; --ok:#067647; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
* { box-sizing: border-box; }
body { margin:0; color:var(--fg); background:var(--bg); line-height:1.5; }
header { display:flex; flex-wrap:wrap; gap:1rem; align-items:center; padding:.75rem 1.25rem; background:var(--card); border-bottom:1px solid var(--line); }
.brand { font-weight:700; color:var(--fg); text-decoration:none; margin-right:auto; }
nav { display:flex; gap:1rem; flex-wrap:wrap; }
nav a { color:var(--muted); text-decoration:none; padding:.25rem 0; }
nav a[aria-current="page"] { color:var(--fg); border-bottom:2px solid var(--accent); }
.signout { display:flex; gap:.5rem; align-items:center; color:var(--muted); font-size:.9rem; }
main { max-width:72rem; margin:0 auto; padding:1.25rem; }
h1 { font-size:1.6rem; margin:.5rem 0 1rem; } h2 { font-size:1.15rem; margin:1.5rem 0 .5rem; }
.card { background:var(--card); border:1px solid var(--line); border-radius:.5rem; padding:1rem 1.25rem; margin:1rem 0; }
.narrow { max-width:26rem; display:flex; flex-direction:column; gap:.5rem; }
.inline { display:flex; flex-wrap:wrap; gap:1rem; align-items:flex-end; } .inline div { display:flex; flex-direction:column; }
label { font-weight:600; font-size:.9rem; } small { font-weight:400; color:var(--muted); }
input, select { font:inherit; padding:.5rem .6rem; border:1px solid var(--line); border-radius:.35rem; min-width:12rem; }
button { font:inherit; padding:.5rem .9rem; border:0; border-radius:.35rem; background:var(--accent); color:#fff; cursor:pointer; }
button.danger, .danger { background:var(--danger); } a.danger { background:none; color:var(--danger); }
.signout button { background:none; color:var(--accent); padding:0; }
:focus-visible { outline:3px solid #f5b700; outline-offset:2px; }
.scroll { overflow-x:auto; } table { width:100%; border-collapse:collapse; background:var(--card); }
th, td { text-align:left; padding:.5rem .6rem; border-bottom:1px solid var(--line); vertical-align:top; font-size:.92rem; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size:.88em; word-break:break-all; }
.badge { font-size:.8rem; padding:.1rem .45rem; border-radius:1rem; background:#eef2f6; } .badge.active { color:var(--ok); background:#e7f6ee; } .badge.revoked, .badge.suspended { color:var(--danger); background:#fdecea; }
.actions a { margin-right:.75rem; }
.error { color:var(--danger); background:#fdecea; padding:.6rem .8rem; border-radius:.35rem; }
.notice { color:var(--ok); background:#e7f6ee; padding:.6rem .8rem; border-radius:.35rem; }
.secret { border-color:#f5b700; background:#fffbea; } .copy-row { display:flex; gap:.75rem; align-items:center; flex-wrap:wrap; }
.stats { display:grid; grid-template-columns:repeat(auto-fit, minmax(12rem, 1fr)); gap:1rem; } .stat { background:var(--card); border:1px solid var(--line); border-radius:.5rem; padding:1rem; color:var(--muted); } .stat .n { display:block; font-size:1.6rem; color:var(--fg); font-weight:700; }
.chart { margin:0; background:var(--card); border:1px solid var(--line); border-radius:.5rem; padding:1rem; } .chart figcaption { color:var(--muted); font-size:.9rem; margin-top:.5rem; }
.muted { color:var(--muted); } .audit { padding-left:1.1rem; } .search { display:flex; flex-wrap:wrap; gap:.5rem; align-items:center; }
.sr-only { position:absolute; width:1px; height:1px; overflow:hidden; clip:rect(0 0 0 0); }
.field { display:flex; flex-direction:column; gap:.25rem; } .field-error { color:var(--danger); margin:0; font-size:.9rem; } [aria-invalid="true"] { border-color:var(--danger); }
.check { display:flex; gap:.5rem; align-items:center; } .check input { min-width:0; } .check label { font-weight:400; }
fieldset { border:1px solid var(--line); border-radius:.35rem; padding:.5rem .75rem; } legend { font-weight:600; font-size:.9rem; } .events { display:grid; grid-template-columns:repeat(auto-fill, minmax(13rem, 1fr)); gap:.25rem .75rem; }
.form-grid { display:grid; grid-template-columns:repeat(auto-fit, minmax(14rem, 1fr)); gap:.75rem 1rem; align-items:start; } .form-grid .wide { grid-column:1 / -1; }
.pager { display:flex; gap:1rem; margin:.75rem 0; } .button-form { display:inline; } .button-row { display:flex; flex-wrap:wrap; gap:.5rem; align-items:center; margin:.5rem 0; }
dl.facts { display:grid; grid-template-columns:max-content 1fr; gap:.35rem 1rem; margin:0; } dl.facts dt { color:var(--muted); } dl.facts dd { margin:0; min-width:0; }
.badge.valid, .badge.delivered, .badge.complete, .badge.enabled { color:var(--ok); background:#e7f6ee; } .badge.failed, .badge.disabled, .badge.expired, .badge.not_activated, .badge.activation_limit_reached, .badge.entitlements_missing, .badge.product_mismatch { color:var(--danger); background:#fdecea; }
.meter { width:100%; height:.75rem; } .legend { display:flex; flex-wrap:wrap; gap:.25rem 1rem; list-style:none; padding:0; margin:.5rem 0 0; font-size:.9rem; } .swatch { display:inline-block; width:.8rem; height:.8rem; border-radius:.15rem; margin-right:.3rem; vertical-align:-.1rem; }
.card > h2:first-child, .card > form > h2:first-child { margin-top:0; } td code { white-space:nowrap; word-break:normal; } pre code { white-space:pre; }
textarea { font:inherit; padding:.5rem .6rem; border:1px solid var(--line); border-radius:.35rem; width:100%; }
@media (max-width: 40rem) { header { padding:.6rem .8rem; } main { padding:.8rem; } input, select { min-width:0; width:100%; } .check input { width:auto; } dl.facts { grid-template-columns:1fr; } dl.facts dd { margin-bottom:.4rem; } .inline { flex-direction:column; align-items:stretch; } }
`;

/** Copy buttons: `data-copy="<id>"` copies the text of the element with that id. */
export const COPY_JS = `
document.addEventListener('click', function (e) {
  var button = e.target.closest('[data-copy]');
  if (!button) return;
  var text = document.getElementById(button.getAttribute('data-copy')).textContent;
  navigator.clipboard.writeText(text).then(function () { button.textContent = 'Copied'; }, function () { button.textContent = 'Select and copy'; });
});
`;
