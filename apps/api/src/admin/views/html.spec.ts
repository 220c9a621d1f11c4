import { escapeHtml, html, trusted } from './html';

describe('html: every interpolated value is escaped, markup from html itself is not escaped twice', () => {
  it('escapes text and attribute breakers', () => {
    const evil = `<img src=x onerror="alert('x')">&\``;
    expect(html`<p title="${evil}">${evil}</p>`.value).toBe(
      '<p title="&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;&#96;">&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;&#96;</p>',
    );
    expect(escapeHtml('a & b')).toBe('a &amp; b');
  });

  it('nests fragments, joins arrays, renders null, undefined and false as nothing, and numbers as text', () => {
    const items = ['<a>', 'b'].map((x) => html`<li>${x}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${0}`.value).toBe('<ul><li>&lt;a&gt;</li><li>b</li></ul>0');
  });

  it('lets only an explicitly trusted constant through as markup', () => {
    expect(html`${trusted('<b>x</b>')}${'<b>x</b>'}`.value).toBe('<b>x</b>&lt;b&gt;x&lt;/b&gt;');
  });
});
