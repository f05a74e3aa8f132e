import { performance } from 'node:perf_hooks';
import { request, Agent } from 'undici';
import { startTestControlPlane } from '../test/support/control-plane.js';
const plane = await startTestControlPlane({ RUNNER_IMAGE: process.env.IMG!, GENERIC_POOL_SIZE: '1' });
await plane.admin('POST', '/api/servers', { subdomain: 'p' });
await plane.admin('PUT', '/api/servers/p/tools/t', { description: '', code: 'return 1;' });
const agent = new Agent();
async function adminInvoke() {
  const r = await request(`http://127.0.0.1:${plane.port}/api/servers/p/tools/t/invoke`, { method: 'POST', dispatcher: agent, headers: { authorization: 'Bearer test-admin-token-0123456789abcdef', 'content-type': 'application/json' }, body: '{"params":{}}' });
  return r.body.text();
}
for (let i = 0; i < 50; i++) await adminInvoke();
const t: number[] = [];
for (let i = 0; i < 300; i++) { const s = performance.now(); await adminInvoke(); t.push(performance.now() - s); }
t.sort((a, b) => a - b);
console.log('admin invoke p50', t[150].toFixed(3), 'p90', t[270].toFixed(3));
console.log(await adminInvoke());
await plane.close();
process.exit(0);
