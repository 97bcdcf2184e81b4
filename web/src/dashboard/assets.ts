import { COPY_JS, CSS } from '../kit/assets';

// The dashboard's stylesheet and script: the shared ones, and the Releases page's upload (served by the
// dashboard itself, /dashboard/assets/…, so its CSP allows nothing else: no inline script, and the
// upload's requests go to the page's own origin, where the gateway serves /api/v1).

export const DASHBOARD_CSS = `${CSS}
.files { list-style:none; padding:0; margin:0; } .files li { margin:.15rem 0; } .notes { white-space:pre-line; }
.upload-row td { background:#fafbfc; } .upload .field { gap:.25rem; } .upload-progress { display:flex; gap:.5rem; align-items:center; } .upload progress { width:12rem; }
`;

/**
 * Uploads from the Releases page (release-views.ts): each draft's form (hidden until this runs, the
 * fallback text hidden instead) first posts to its own action, which answers an upload grant's path on
 * the gateway, then sends the chosen file there with a PUT, showing the upload's progress, and loads the
 * page again once the gateway has stored it. A refusal is said next to the form.
 */
export const UPLOAD_JS = `
document.querySelectorAll('form[data-upload]').forEach(function (f) { f.hidden = false; });
document.querySelectorAll('[data-upload-fallback]').forEach(function (p) { p.hidden = true; });
document.addEventListener('submit', function (e) {
  var form = e.target.closest('form[data-upload]');
  if (!form) return;
  e.preventDefault();
  var file = form.querySelector('input[type=file]').files[0];
  var bar = form.querySelector('progress');
  var status = form.querySelector('[data-upload-status]');
  var button = form.querySelector('button[type=submit]');
  var fail = function (text) { status.textContent = text; button.disabled = false; };
  if (!file) return fail('Choose a file first.');
  var body = new URLSearchParams();
  ['_csrf', 'platform', 'arch', 'signature'].forEach(function (n) { body.append(n, form.elements[n].value); });
  body.append('filename', file.name);
  button.disabled = true;
  bar.hidden = false;
  bar.value = 0;
  status.textContent = 'Starting the upload…';
  fetch(form.getAttribute('action'), { method: 'POST', body: body, credentials: 'same-origin', headers: { Accept: 'application/json' } })
    .then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (answer) {
        if (!res.ok || !answer.url) throw new Error(answer.message || 'The upload could not start (HTTP ' + res.status + '): reload the page and try again.');
        return answer.url;
      });
    })
    .then(function (url) {
      var xhr = new XMLHttpRequest();
      xhr.open('PUT', url);
      xhr.setRequestHeader('Content-Type', 'application/octet-stream');
      xhr.upload.onprogress = function (p) {
        if (!p.lengthComputable) return;
        bar.value = Math.floor((p.loaded * 100) / p.total);
        status.textContent = bar.value + '%';
      };
      xhr.onload = function () {
        if (xhr.status !== 200 && xhr.status !== 201) {
          var problem = {};
          try { problem = JSON.parse(xhr.responseText); } catch (err) { problem = {}; }
          return fail(problem.detail || 'The upload was refused (HTTP ' + xhr.status + ').');
        }
        bar.value = 100;
        status.textContent = '100%: ' + file.name + ' is uploaded.';
        window.location.assign(form.getAttribute('data-reload'));
      };
      xhr.onerror = function () { fail('The upload broke off: try again.'); };
      xhr.send(file);
    })
    .catch(function (err) { fail(err.message); });
});
`;

export const DASHBOARD_JS = `${COPY_JS}${UPLOAD_JS}`;
