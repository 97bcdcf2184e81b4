// The hosted checkout page's own stylesheet and script (served under /checkout/assets/, its CSP allows
// nothing else): a card in the middle of the page, and the licence key's copy button.

export const CHECKOUT_CSS = `
body { margin:0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background:#f6f7f9; color:#1c2430; }
.card { max-width:28rem; margin:2rem auto; background:#fff; border:1px solid #dde1e7; border-radius:.6rem; padding:1.5rem; }
h1 { font-size:1.4rem; margin:.25rem 0; } .price { font-size:1.8rem; font-weight:700; margin:.25rem 0 1rem; }
form { display:flex; flex-direction:column; gap:.5rem; } label { font-weight:600; font-size:.9rem; }
input { font:inherit; padding:.6rem; border:1px solid #cfd5dd; border-radius:.35rem; }
button { font:inherit; padding:.65rem 1rem; border:0; border-radius:.35rem; background:#2457d6; color:#fff; cursor:pointer; margin-top:.5rem; }
button.link { background:none; color:#2457d6; padding:0; text-decoration:underline; } form.cancel { margin-top:1rem; }
:focus-visible { outline:3px solid #f5b700; outline-offset:2px; }
.test { background:#fff4d6; border:1px solid #f5b700; padding:.5rem .75rem; border-radius:.35rem; font-size:.9rem; }
.error { color:#b42318; background:#fdecea; padding:.6rem .8rem; border-radius:.35rem; }
code { font-family: ui-monospace, Menlo, monospace; word-break:break-all; } .copy-row { display:flex; gap:.75rem; align-items:center; flex-wrap:wrap; }
@media (max-width: 30rem) { .card { margin:0; border-radius:0; border:0; } }
`;

export const CHECKOUT_JS = `
document.addEventListener('click', function (e) {
  var b = e.target.closest('[data-copy]');
  if (!b) return;
  navigator.clipboard.writeText(document.getElementById(b.getAttribute('data-copy')).textContent).then(function () { b.textContent = 'Copied'; }, function () { b.textContent = 'Select and copy'; });
});
`;
