import { parseUriTemplate } from '../control-plane/store/uri-template.ts';
const t = (tpl: string, ...uris: string[]) => {
  let p; try { p = parseUriTemplate(tpl); } catch (e) { console.log(tpl, 'REFUSED', (e as Error).message); return; }
  for (const u of uris) console.log(JSON.stringify(tpl), JSON.stringify(u), '=>', JSON.stringify(p.match(u)));
};
const rt = (tpl: string, values: Record<string,string>) => {
  const p = parseUriTemplate(tpl); const u = p.expand(values); const m = p.match(u);
  const ok = m && Object.keys(values).every(k => m[k] === values[k]);
  console.log('ROUNDTRIP', tpl, JSON.stringify(values), '->', u, '->', JSON.stringify(m), ok ? 'OK' : 'MISMATCH');
};
t('file:///{+dir}/{name}', 'file:///a/b.txt', 'file:///a/b/c.txt');
t('file:///{name}{.ext}', 'file:///a.txt', 'file:///a.b.txt', 'file:///archive.tar.gz');
t('x://h{/a}{/b}', 'x://h/1/2', 'x://h//2', 'x://h/1/');
t('x://h/p{?a,b}', 'x://h/p?a=1&b=2', 'x://h/p?b=2&a=1', 'x://h/p?a=1', 'x://h/p?a=1&b=2&c=3', 'x://h/p?a=&b=');
t('x://h/p{#f}', 'x://h/p#x', 'x://h/p#a#b', 'x://h/p');
t('x://h/{a}', 'x://h/a%2Fb', 'x://h/%E0%A4%A', 'x://h/a%20b', 'x://h/%');
t('x://{+p}{/id}', 'x://a/b/c');
t('x://{a}/{b}', 'x://1/2/3');
t('x://{+a}?{b}', 'x://p?q?r');
t('x://h{?q}{#f}', 'x://h?q=1#frag');
t('x://h/{a}{?q}', 'x://h/v?q=1', 'x://h/v');
t('x://h/{a}{&q}', 'x://h/v&q=1');
t('x://h/{a,b}', 'x://h/1,2', 'x://h/1,2,3');
t('x://h{.a,b}', 'x://h.1.2');
t('x://{+a}{#b}', 'x://p/q#r');
t('x://h{/a}', 'x://h/');
rt('file:///{+dir}/{name}', { dir: 'a/b', name: 'c.txt' });
rt('file:///{name}{.ext}', { name: 'a.b', ext: 'txt' });
rt('x://h{/a}', { a: '' });
rt('x://h/{a}', { a: '' });
rt('x://h/{a}', { a: 'x/y' });
rt('x://h/{+a}', { a: 'x y%' });
rt('x://h/{+a}', { a: '100%' });
rt('x://h/{+a}/raw', { a: 'a/raw/b' });
rt('x://h/{a}-{b}', { a: 'a-b', b: 'c' });
rt('x://h/{a}{?q}', { a: 'a', q: 'x&y' });
rt('x://h{?q}', { q: "a'b" });
rt('x://h{#f}', { f: 'a#b' });
rt('x://h{#f}', { f: '[x]' });
rt('x://h/{+a}', { a: '[x]' });
rt('x://h{.a}', { a: 'a.b' });
try { rt("x://h/{a}", { a: "\uD800" }); } catch (e) { console.log("EXPAND THROWS", (e as Error).name, (e as Error).message); }
// never-matching?
t('x://{a}.{+b}', 'x://1.2');
t('x://{a}#{b}', 'x://1#2');
t('x://h{?a}{&a2}', 'x://h?a=1&a2=2');
t('x://h{?a}&a=', 'x://h?a=1&a=');
t('x://h{?ab}{?a}', 'x://h?ab=1?a=2');
t('x://h/{a}{/b}', 'x://h/1/2');
