/**
 * Issue 28, finding 11: the prompt render limit counted characters of text,
 * and JSON sends a control character as six bytes (`\u0001`): a 1.04 MB
 * render became a 6.24 MB answer. Every limit that guards an answer counts
 * the bytes that are sent: template renders, static resources (at save and
 * read), what prompt, resource and completion code returns, and tool results
 * (a value other than a string is sent as JSON text, escaped once more, and
 * an object as structuredContent too). A real control plane with
 * TOOL_MAX_RESULT_BYTES at 64 KiB, real Docker, the official SDK client, and
 * the bytes of each HTTP answer as they arrive.
 */
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { connectSdkSession, type SdkSession } from '../../support/sdk-session.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

const LIMIT = 65_536;
const SERVER = '/api/servers/sizes';

let plane: TestControlPlane;
let session: SdkSession;
/** Bytes of each answer body the client received, in order. */
const answered: number[] = [];

/** loopbackFetch, recording the size of every answer body. */
const measuringFetch: typeof fetch = async (input, init) => {
  const response = await loopbackFetch(input, init);
  if (init?.method === 'POST') {
    answered.push(Buffer.byteLength(await response.clone().text()));
  }
  return response;
};

/** The bytes of the answer to `work`, and its result or McpError. */
async function measured<T>(
  work: () => Promise<T>,
): Promise<{ bytes: number; outcome: T | McpError }> {
  const before = answered.length;
  let outcome: T | McpError;
  try {
    outcome = await work();
  } catch (error) {
    if (!(error instanceof McpError)) throw error;
    outcome = error;
  }
  return { bytes: Math.max(0, ...answered.slice(before)), outcome };
}

function errorCodeOf(outcome: unknown): unknown {
  return outcome instanceof McpError ? (outcome.data as { code?: string })?.code : undefined;
}

async function put(path: string, body: unknown): Promise<{ status: number; body: any }> {
  return plane.admin('PUT', `${SERVER}${path}`, body);
}

beforeAll(async () => {
  plane = await startTestControlPlane({ TOOL_MAX_RESULT_BYTES: String(LIMIT) });
  expect((await plane.admin('POST', '/api/servers', { subdomain: 'sizes' })).status).toBe(201);
  const saves = [
    put('/prompts/echo', {
      description: 'Repeats a word',
      arguments: [{ name: 'word', required: true }],
      messages: [{ role: 'user', content: { type: 'text', text: 'Say {{word}}' } }],
    }),
    put('/resources/dump', {
      uriTemplate: 'dump://{what}',
      // A value is answered as JSON text: its quotes are escaped once more.
      code: "return { what: params.what, quotes: '\"'.repeat(25_000) };",
    }),
    put('/tools/quotes', {
      description: 'An object of quotes: 50 KB of JSON, answered as text and as structuredContent',
      code: "return { quotes: '\"'.repeat(25_000) };",
    }),
    put('/tools/letters', {
      description: 'An object of letters that fits once answered',
      code: "return { letters: 'x'.repeat(25_000) };",
    }),
  ];
  for (const saved of await Promise.all(saves)) {
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  }
  session = await connectSdkSession(plane.mcpUrl('sizes'), { fetch: measuringFetch });
}, 180_000);

afterAll(async () => {
  await session?.client.close().catch(() => undefined);
  await plane?.close();
});

describe('answers are bounded by the bytes they are sent as (issue 28, finding 11)', () => {
  it('refuses a prompt render of control characters by its encoded size', async () => {
    const { client } = session;
    // 20 000 control characters: 20 KB of text (under the limit), 120 KB of JSON.
    const attack = await measured(() =>
      client.getPrompt({ name: 'echo', arguments: { word: '\u0001'.repeat(20_000) } }),
    );
    console.log(`prompt render of 20 000 control characters: answer of ${attack.bytes} bytes`);
    expect(errorCodeOf(attack.outcome)).toBe('ERR_RESULT_TOO_LARGE');
    expect(attack.bytes).toBeLessThan(LIMIT);
    // 10 000 of them, 60 KB of JSON, fit.
    const fits = await measured(() =>
      client.getPrompt({ name: 'echo', arguments: { word: '\u0001'.repeat(10_000) } }),
    );
    expect(errorCodeOf(fits.outcome)).toBeUndefined();
    expect(fits.bytes).toBeGreaterThan(60_000);
    expect(fits.bytes).toBeLessThanOrEqual(LIMIT + 100);
  });

  it('refuses at save a static resource whose text is too large once encoded', async () => {
    const refused = await put('/resources/controls', {
      uri: 'controls://all',
      text: '\u0001'.repeat(20_000),
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/at most 65536 bytes of JSON .* takes 120002/);
    const saved = await put('/resources/fewer', {
      uri: 'controls://fewer',
      text: '\u0001'.repeat(10_000),
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    const read = await measured(() => session.client.readResource({ uri: 'controls://fewer' }));
    expect(errorCodeOf(read.outcome)).toBeUndefined();
    expect(read.bytes).toBeLessThanOrEqual(LIMIT + 100);
  });

  it('refuses what resource code returns once it is JSON text in the answer', async () => {
    const read = await measured(() => session.client.readResource({ uri: 'dump://it' }));
    console.log(`resource of 50 KB of JSON quotes: answer of ${read.bytes} bytes`);
    expect(errorCodeOf(read.outcome)).toBe('ERR_RESULT_TOO_LARGE');
    expect(read.bytes).toBeLessThan(LIMIT);
  });

  it('refuses a tool result whose answer (text and structuredContent) passes the limit', async () => {
    const quotes = await measured(() => session.client.callTool({ name: 'quotes' }));
    console.log(`tool result of 50 KB of JSON quotes: answer of ${quotes.bytes} bytes`);
    const refused = quotes.outcome as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(refused._meta?.['mcphost/errorCode']).toBe('ERR_RESULT_TOO_LARGE');
    expect(quotes.bytes).toBeLessThan(LIMIT);
    const letters = await measured(() => session.client.callTool({ name: 'letters' }));
    const answered = letters.outcome as CallToolResult;
    expect(answered.isError ?? false).toBe(false);
    expect(answered.structuredContent).toEqual({ letters: 'x'.repeat(25_000) });
    expect(letters.bytes).toBeGreaterThan(50_000);
    expect(letters.bytes).toBeLessThanOrEqual(LIMIT);
  });
});
