/**
 * era-routing.ts decides two kinds of request without the SDK's classifier.
 * Its verdicts must be the classifier's: generated POSTs (headers with and
 * without whitespace, claims of every kind, answers, batches, retries,
 * `initialize`, listen requests) are routed both ways and compared. Where a
 * modern request was routed with its envelope unchecked, the classifier may
 * differ only by refusing that envelope, which the endpoint then answers
 * (test/control-plane/mcp/modern-era.test.ts checks that on the wire).
 */
import type { IncomingMessage } from 'node:http';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/core';
import { classifyInboundRequest, type JSONRPCMessage } from '@modelcontextprotocol/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifierRefusal, routeOf } from '../../../control-plane/mcp/era-routing.js';
import type { IncomingPost } from '../../../control-plane/mcp/incoming-request.js';

const CLAIM = 'io.modelcontextprotocol/protocolVersion';
const CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const INFO = 'io.modelcontextprotocol/clientInfo';

/** Mostly this server's revision, so that the shortcut's conditions meet often. */
const version = fc.oneof(
  { arbitrary: fc.constant('2026-07-28'), weight: 6 },
  { arbitrary: fc.constantFrom('2025-11-25', '2025-06-18', 'v9', ' 2026-07-28', ''), weight: 4 },
);
const method = fc.constantFrom(
  'tools/call',
  'tools/list',
  'initialize',
  'subscriptions/listen',
  'server/discover',
  'prompts/get',
  'notifications/initialized',
);
const envelope = fc.record(
  {
    [CLAIM]: fc.oneof(version, fc.constant(7)),
    [CAPABILITIES]: fc.oneof(
      fc.constant({}),
      fc.constant({ elicitation: { form: {} } }),
      fc.constant('none'),
      fc.constant({ sampling: 3 }),
    ),
    [INFO]: fc.oneof(fc.constant({ name: 'c', version: '1' }), fc.constant({ name: 7 })),
    'io.modelcontextprotocol/logLevel': fc.constantFrom('info', 'loud'),
  },
  { requiredKeys: [] },
);
const params = fc.record(
  {
    name: fc.constantFrom('echo', 'other'),
    arguments: fc.constant({ text: 'x' }),
    _meta: fc.oneof(envelope, fc.constant(null), fc.constant([])),
    requestState: fc.constant('sealed'),
  },
  { requiredKeys: ['_meta'] },
);
/** A modern request as clients send it, with its envelope sometimes malformed. */
const modernRequest = fc.record({
  jsonrpc: fc.constant('2.0'),
  id: fc.nat(),
  method: fc.constantFrom('tools/call', 'tools/list', 'server/discover', 'initialize'),
  params: fc.record({
    name: fc.constant('echo'),
    _meta: fc.record(
      {
        [CLAIM]: version,
        [CAPABILITIES]: fc.oneof(
          { arbitrary: fc.constant({}), weight: 4 },
          { arbitrary: fc.constantFrom('none', { sampling: 3 }), weight: 1 },
        ),
        [INFO]: fc.constantFrom({ name: 'c', version: '1' }, { name: 7 }),
      },
      { requiredKeys: [CLAIM] },
    ),
  }),
});
const message = fc.oneof(
  { arbitrary: modernRequest, weight: 3 },
  {
    arbitrary: fc.record(
      {
        jsonrpc: fc.constant('2.0'),
        id: fc.oneof(fc.nat(), fc.constant('a')),
        method,
        params: fc.oneof(params, fc.constant(undefined)),
      },
      { requiredKeys: ['jsonrpc', 'method'] },
    ),
    weight: 2,
  },
  {
    arbitrary: fc.record({ jsonrpc: fc.constant('2.0'), id: fc.nat(), result: fc.constant({}) }),
    weight: 1,
  },
);
const headerValue = <T>(values: fc.Arbitrary<T>) => fc.option(values, { nil: undefined, freq: 4 });
/** Headers for a body: its own method most often, else another or one with whitespace. */
const headersFor = (items: unknown[]) => {
  const own = (items[0] as { method?: unknown }).method;
  return fc.record({
    'mcp-protocol-version': headerValue(version),
    'mcp-method': headerValue(
      fc.oneof(
        { arbitrary: fc.constant(typeof own === 'string' ? own : 'tools/call'), weight: 6 },
        { arbitrary: fc.oneof(method, fc.constant(' tools/call')), weight: 2 },
      ),
    ),
    'mcp-name': headerValue(fc.constantFrom('echo', 'other')),
  });
};

/** A POST as readPost leaves it: each message parsed by the SDK's JSON-RPC schema. */
function postOf(items: unknown[], batch: boolean): IncomingPost | undefined {
  const messages: JSONRPCMessage[] = [];
  for (const item of items) {
    const parsed = JSONRPCMessageSchema.safeParse(item);
    if (!parsed.success) return undefined;
    messages.push(parsed.data);
  }
  return { messages, batch };
}

function requestWith(sent: Record<string, string | undefined>): IncomingMessage {
  const defined = Object.fromEntries(
    Object.entries(sent).filter(([, value]) => value !== undefined),
  );
  return { headers: defined } as unknown as IncomingMessage;
}

function classify(req: IncomingMessage, post: IncomingPost) {
  const header = (name: string) => req.headers[name] as string | undefined;
  return classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: header('mcp-protocol-version'),
    mcpMethodHeader: header('mcp-method'),
    mcpNameHeader: header('mcp-name'),
    body: post.batch ? post.messages : post.messages[0],
  });
}

describe('era routing without the classifier', () => {
  it('gives the classifier’s verdict, or one it refuses only for the envelope left unchecked', () => {
    let fast = 0;
    fc.assert(
      fc.property(
        fc
          .tuple(fc.array(message, { minLength: 1, maxLength: 2 }), fc.boolean())
          .chain(([items, batch]) =>
            fc.tuple(fc.constant(items), fc.constant(batch), headersFor(items)),
          ),
        ([items, batch, sent]) => {
          const post = postOf(batch ? items : items.slice(0, 1), batch);
          if (post === undefined) return;
          const req = requestWith(sent);
          const routed = routeOf(req, post);
          const classified = classify(req, post);
          if (!routed.envelopeUnchecked) {
            // The legacy shortcut is the classifier's "no claim"; anything else is its own outcome.
            if (routed.outcome.kind === 'legacy') expect(classified.kind).toBe('legacy');
            else expect(routed.outcome).toEqual(classified);
            return;
          }
          fast++;
          if (classified.kind === 'reject') {
            expect(classified.rung).toBe('envelope');
            expect(classifierRefusal(req, post)).toEqual(classified);
          } else {
            expect(routed.outcome).toEqual(classified);
            expect(classifierRefusal(req, post)).toBeUndefined();
          }
        },
      ),
      { numRuns: 3000 },
    );
    // The shortcut is taken often enough for the comparison to mean something (about 120 of the
    // 3000 runs on average; 95 was seen once, so the floor is far below any run's count).
    expect(fast).toBeGreaterThan(40);
  });

  it('routes a plain modern call without the classifier, and a retry or a listen request with it', () => {
    const meta = { [CLAIM]: '2026-07-28', [CAPABILITIES]: {} };
    const req = requestWith({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' });
    const call = (extra: object) =>
      postOf(
        [
          {
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'echo', _meta: meta, ...extra },
          },
        ],
        false,
      )!;
    expect(routeOf(req, call({})).envelopeUnchecked).toBe(true);
    expect(routeOf(req, call({ requestState: 'x' })).envelopeUnchecked).toBe(false);
    const listen = requestWith({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'subscriptions/listen',
    });
    const listenPost = postOf(
      [{ jsonrpc: '2.0', id: 1, method: 'subscriptions/listen', params: { _meta: meta } }],
      false,
    )!;
    expect(routeOf(listen, listenPost).envelopeUnchecked).toBe(false);
  });
});
