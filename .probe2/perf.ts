import { parseUriTemplate } from '../control-plane/store/uri-template.ts';
function bench(name: string, tpl: string, uri: string, n = 2000) {
  const p = parseUriTemplate(tpl);
  p.match(uri);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) p.match(uri);
  const per = (performance.now() - t0) / n;
  console.log(name, 'tpl', tpl.length, 'uri', uri.length, 'per match µs', (per * 1000).toFixed(1), 'x100 templates ms', (per * 100).toFixed(3));
}
// Long literal with near-miss periodic pattern
const A = 'a'.repeat(1000);
bench('periodic literal', `x:{+v}${A}b{w}`, 'x:' + 'a'.repeat(2044) + 'c');
bench('periodic literal2', `x:{+v}${'ab'.repeat(500)}c{w}`, 'x:' + 'ab'.repeat(1022) + 'z');
// Many slots, each literal scans far
const tpl16 = 'x:' + Array.from({ length: 16 }, (_, i) => `{+v${i}}-${i}-`).join('');
bench('16 slots', tpl16, 'x:' + '-'.repeat(2040) + '-15-');
// Tail that passes, middle literal absent
bench('absent middle', `x:{+a}/zzzzzzzz/{+b}.json`, 'x:' + 'a/'.repeat(1015) + '.json');
// decode heavy
bench('decode', `x:{+a}`, 'x:' + '%41'.repeat(682));
bench('decode bad', `x:{+a}`, 'x:' + '%E0'.repeat(682));
// worst periodic with mismatch at start of pattern
bench('periodic start', `x:{+v}b${'a'.repeat(1000)}{w}`, 'x:' + 'b'+'a'.repeat(999) + 'c' + 'a'.repeat(1000)+'x');
