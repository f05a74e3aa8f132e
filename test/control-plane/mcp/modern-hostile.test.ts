/**
 * Hostile use of the modern era's input rounds (MCP 2026-07-28), over raw
 * HTTP on a real control plane with real containers: a `requestState`
 * replayed, altered, moved to another caller, server, tool or argument set,
 * or used after it expired is refused with -32602, and the parked call stays
 * there for its rightful retry; one caller parking calls as fast as it may is
 * stopped at its bound (ERR_INPUT_QUOTA) while another server's calls are
 * all answered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startTestControlPlane,
  TEST_ADMIN_TOKEN,
  type TestControlPlane,
} from '../../support/control-plane.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { modernToolCall, type ModernCallOptions } from '../../support/mcp-requests.js';

let plane: TestControlPlane;
const keys: string[] = [];

const ASK = `const answer = await sdk.elicit('Name?', { type: 'object', properties: { name: { type: 'string' } } }, { key: 'name' });
  return 'hello ' + answer.content.name + (params.suffix ?? '');`;

interface Answer {
  status: number;
  body: { id: number; result?: Record<string, unknown>; error?: { code: number; message: string } };
}

/** One `tools/call` to `server` as the caller of `key` (none: anonymous). */
function call(server: string, tool: string, extra: ModernCallOptions = {}): Promise<Answer> {
  return modernToolCall(plane.mcpUrl(server), tool, extra);
}

/** A first round that parks: its state. */
async function parked(server: string, tool: string, key?: string, args?: object): Promise<string> {
  const first = await call(server, tool, { key, args });
  expect(first.body.result, JSON.stringify(first.body)).toMatchObject({
    resultType: 'input_required',
  });
  return first.body.result!.requestState as string;
}

const NAME = { name: { action: 'accept', content: { name: 'Ada' } } };

/** Calls of `server` parked now, as /metrics says. */
async function parkedOn(server: string): Promise<number> {
  const response = await loopbackFetch(`${plane.adminUrl}/metrics`, {
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
  });
  const line = new RegExp(`^mcphost_mcp_parked_calls\\{server="${server}"\\} (\\d+)$`, 'm');
  return Number(line.exec(await response.text())?.[1] ?? 0);
}
const textOf = (answer: Answer) => (answer.body.result?.content as { text: string }[])[0]!.text;

function expectRefused(answer: Answer, what: string): void {
  expect(answer.body.error, what).toMatchObject({ code: -32602 });
  expect(answer.body.error!.message, what).toMatch(/requestState/);
}

beforeAll(async () => {
  // Short limits: a state lives as long as the longest call may (TOOL_MAX_TIMEOUT_MS).
  plane = await startTestControlPlane({
    TOOL_TIMEOUT_MS: '3000',
    TOOL_MAX_TIMEOUT_MS: '4000',
    MCP_MAX_PARKED_PER_CALLER: '3',
    RATE_LIMIT_PER_MINUTE: '0',
  });
  for (const server of ['alpha', 'beta', 'keyed', 'victim']) {
    expect((await plane.admin('POST', '/api/servers', { subdomain: server })).status).toBe(201);
    for (const tool of ['ask', 'ask_too']) {
      const saved = await plane.admin('PUT', `/api/servers/${server}/tools/${tool}`, {
        description: 'asks a name',
        code: ASK,
        parameters: [{ name: 'suffix', type: 'string', required: false }],
      });
      expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    }
  }
  const echo = await plane.admin('PUT', '/api/servers/victim/tools/echo', {
    description: 'echo',
    code: 'return params.n;',
    parameters: [{ name: 'n', type: 'number', required: true }],
  });
  expect(echo.status).toBe(201);
  for (const label of ['first', 'second']) {
    const created = await plane.admin('POST', '/api/servers/keyed/api-keys', { label });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    keys.push(created.body.key);
  }
  const mode = await plane.admin('PATCH', '/api/servers/keyed/settings', {
    securityMode: 'apikey',
  });
  expect(mode.status, JSON.stringify(mode.body)).toBe(200);
}, 180_000);

afterAll(async () => {
  await plane?.close();
});

describe('a requestState used where it does not belong', () => {
  it('is refused when replayed, and the call went on once', async () => {
    const state = await parked('alpha', 'ask');
    expect(textOf(await call('alpha', 'ask', { state, answers: NAME }))).toBe('hello Ada');
    expectRefused(await call('alpha', 'ask', { state, answers: NAME }), 'replayed');
  });

  it('is refused when altered, and the rightful retry still resumes the call', async () => {
    const state = await parked('alpha', 'ask');
    const flipped = `${state.slice(0, 20)}${state[20] === 'A' ? 'B' : 'A'}${state.slice(21)}`;
    expectRefused(await call('alpha', 'ask', { state: flipped, answers: NAME }), 'altered');
    expectRefused(await call('alpha', 'ask', { state: `${state}x`, answers: NAME }), 'appended');
    expect(textOf(await call('alpha', 'ask', { state, answers: NAME }))).toBe('hello Ada');
  });

  it('is refused on another server, another tool or other arguments, and stays good for its own', async () => {
    const state = await parked('alpha', 'ask', undefined, { suffix: '!' });
    expectRefused(
      await call('beta', 'ask', { state, answers: NAME, args: { suffix: '!' } }),
      'server',
    );
    expectRefused(
      await call('alpha', 'ask_too', { state, answers: NAME, args: { suffix: '!' } }),
      'tool',
    );
    expectRefused(
      await call('alpha', 'ask', { state, answers: NAME, args: { suffix: '?' } }),
      'args',
    );
    expectRefused(await call('alpha', 'ask', { state, answers: NAME }), 'no args');
    expect(
      textOf(await call('alpha', 'ask', { state, answers: NAME, args: { suffix: '!' } })),
    ).toBe('hello Ada!');
  });

  it('is refused from another caller of the same server (another API key)', async () => {
    const state = await parked('keyed', 'ask', keys[0]);
    expectRefused(await call('keyed', 'ask', { state, answers: NAME, key: keys[1] }), 'other key');
    expect(textOf(await call('keyed', 'ask', { state, answers: NAME, key: keys[0] }))).toBe(
      'hello Ada',
    );
  });

  it('is refused once expired (the call ended at its own limit before)', async () => {
    const state = await parked('alpha', 'ask');
    await new Promise((resolve) => setTimeout(resolve, 5_500));
    expectRefused(await call('alpha', 'ask', { state, answers: NAME }), 'expired');
  });

  it('refuses a malformed answer without spending the state', async () => {
    const state = await parked('alpha', 'ask');
    const malformed = await call('alpha', 'ask', { state, answers: { name: { action: 'maybe' } } });
    expect(malformed.body.error).toMatchObject({ code: -32602 });
    expect(textOf(await call('alpha', 'ask', { state, answers: NAME }))).toBe('hello Ada');
  });
});

describe('one caller parking calls as fast as it may', () => {
  it('is stopped at its bound while another server is answered', async () => {
    const refused: number[] = [];
    let parkedCount = 0;
    let mostParkedAtOnce = 0;
    let flooding = true;
    const watch = (async () => {
      while (flooding) {
        mostParkedAtOnce = Math.max(mostParkedAtOnce, await parkedOn('alpha'));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    // Two waves of six at once: more than the bound reach their question together
    // however slow the machine (one at a time, a loaded machine's cold starts let
    // each parked call end at its limit before the next one parks).
    const flood = (async () => {
      for (let wave = 0; wave < 2; wave++) {
        const answers = await Promise.all(Array.from({ length: 6 }, () => call('alpha', 'ask')));
        for (const answer of answers) {
          if (answer.body.result?.resultType === 'input_required') parkedCount += 1;
          else refused.push(answer.body.error?.code ?? 0);
        }
      }
    })().finally(() => (flooding = false));
    const victim: number[] = [];
    for (let n = 0; n < 10; n++) {
      const started = performance.now();
      const answer = await call('victim', 'echo', { args: { n } });
      expect(textOf(answer)).toBe(String(n));
      victim.push(performance.now() - started);
    }
    await flood;
    await watch;
    console.log(
      `[figures] attacker parked ${parkedCount} (at most ${mostParkedAtOnce} at once), refused ${refused.length}; victim calls ms: ${victim.map((ms) => ms.toFixed(0)).join(' ')}`,
    );
    // Parked calls end at their own limit (3 s), so more than 3 may park over the flood; never more at once.
    expect(mostParkedAtOnce).toBeGreaterThan(0);
    expect(mostParkedAtOnce).toBeLessThanOrEqual(3);
    expect(refused.length).toBeGreaterThan(0);
    for (const code of refused) expect(code).toBe(-32000);
  });
});
