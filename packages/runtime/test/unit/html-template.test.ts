import { html, joinHtml, nothing, trustedHtml } from '../../src/html/template';

describe('html templates escape by default', () => {
  it('escapes every interpolated string, attribute quotes included', () => {
    const name = `<script>alert("x")</script>&'`;
    expect(String(html`<p title="${name}">${name}</p>`)).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</p>',
    );
  });

  it('puts Html made by html`…` or trustedHtml() on the page as it is, and only that', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(String(html`<p>${inner}${trustedHtml('<br>')}${'<br>'}</p>`)).toBe('<p><b>&lt;i&gt;</b><br>&lt;br&gt;</p>');
  });

  it('joins arrays and renders nothing for false, null and undefined', () => {
    const rows = ['a<', 'b'].map((x) => html`<li>${x}</li>`);
    expect(String(html`<ul>${rows}${false}${null}${undefined}${nothing}</ul>`)).toBe(
      '<ul><li>a&lt;</li><li>b</li></ul>',
    );
    expect(String(html`${0}`)).toBe('0');
  });

  it('joins with a separator, escaping a plain-text one', () => {
    expect(String(joinHtml([html`<a>1</a>`, html`<a>2</a>`], ' & '))).toBe('<a>1</a> &amp; <a>2</a>');
    expect(String(joinHtml([]))).toBe('');
  });

  it('refuses a Promise (a missing await) instead of rendering it later', () => {
    expect(() => html`<p>${Promise.resolve('x')}</p>`).toThrow(/await/);
  });
});
