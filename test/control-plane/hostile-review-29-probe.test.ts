import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../support/control-plane.js';
import { loopbackFetch } from '../support/loopback-fetch.js';

let plane: TestControlPlane;
let nextId = 1;
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
};
function headersFor(method: string, name?: string, key?: string) {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    ...(name ? { 'mcp-name': name } : {}),
    ...(key ? { authorization: `Bearer ${key}` } : {}),
  };
}
async function call(
  server: string,
  tool: string,
  extra: { args?: object; state?: string; answers?: object; key?: string } = {},
) {
  const response = await loopbackFetch(plane.mcpUrl(server), {
    method: 'POST',
    headers: headersFor('tools/call', tool, extra.key),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method: 'tools/call',
      params: {
        name: tool,
        arguments: extra.args ?? {},
        ...(extra.state === undefined ? {} : { requestState: extra.state }),
        ...(extra.answers === undefined ? {} : { inputResponses: extra.answers }),
        _meta: META,
      },
    }),
  });
  const text = await response.text();
  let body: any;
  try {
    body = text.startsWith('{') ? JSON.parse(text) : JSON.parse(text.split('data: ').at(-1)!);
  } catch {
    body = text.slice(0, 300);
  }
  return { status: response.status, body };
}

beforeAll(async () => {
  plane = await startTestControlPlane({ RATE_LIMIT_PER_MINUTE: '0', TOOL_TIMEOUT_MS: '30000' });
  for (const s of ['evil', 'victim', 'keyed'])
    expect((await plane.admin('POST', '/api/servers', { subdomain: s })).status).toBe(201);
  const saved = await plane.admin('PUT', '/api/servers/evil/tools/ask', {
    description: 'asks',
    code: `const a = await sdk.elicit('Name?', { type: 'object', properties: { name: { type: 'string' } }, allOf: [{ properties: { name: { pattern: '^(a|a)*$' } } }] }, { key: 'k' });
      return 'got ' + JSON.stringify(a);`,
    parameters: [],
  });
  expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  const big = await plane.admin('PUT', '/api/servers/evil/tools/big', {
    description: 'asks big',
    code: `const m = 'm'.repeat(12_000_000); const r = await Promise.all([1,2,3,4,5,6].map((i) => sdk.elicit(m, { type: 'object', properties: { n: { type: 'string' } } }, { key: 'k' + i }))); return 1;`,
    parameters: [],
  });
  expect(big.status, JSON.stringify(big.body)).toBe(201);
  const echo = await plane.admin('PUT', '/api/servers/victim/tools/echo', {
    description: 'e',
    code: 'return 1;',
    parameters: [],
  });
  expect(echo.status).toBe(201);
}, 180_000);
afterAll(async () => {
  await plane?.close();
});

describe('probes', () => {
  it.skip('presupplied redos, no state', async () => {
    await call('victim', 'echo');
    const t = performance.now();
    const r = await call('evil', 'ask', {
      answers: { k: { action: 'accept', content: { name: 'a'.repeat(25) + '!' } } },
    });
    console.log(
      'presupplied',
      (performance.now() - t).toFixed(0),
      JSON.stringify(r.body).slice(0, 200),
    );
  });
  it('big input_required', async () => {
    await call('victim', 'echo');
    let done = false;
    const times: number[] = [];
    const victim = (async () => {
      while (!done) {
        const t = performance.now();
        await call('victim', 'echo');
        times.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const before = process.memoryUsage().rss;
    let peak = before;
    const watch = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 20);
    const t = performance.now();
    const r = await call('evil', 'big');
    const took = performance.now() - t;
    done = true;
    await victim;
    clearInterval(watch);
    console.log(
      'big',
      r.status,
      took.toFixed(0),
      typeof r.body === 'string' ? r.body.slice(0, 200) : JSON.stringify(r.body).length,
      'rss +MB',
      ((peak - before) / 1e6).toFixed(0),
      'victim max',
      Math.max(...times).toFixed(0),
    );
  }, 120_000);
});
