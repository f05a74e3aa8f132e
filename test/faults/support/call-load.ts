/**
 * Drives many official-SDK MCP clients against one hosted server: each call
 * carries a unique token the tool echoes back, so every answer can be matched
 * to its own call. Clients take calls from one shared counter until `calls`
 * have been made (or `signal` stops them); a client whose transport fails is
 * replaced by a fresh session before its next call.
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import {
  classifyResult,
  classifyThrown,
  TOKEN_PREFIX,
  type ClassifiedAnswer,
} from './classify-answer.js';
import { FigureCollector, type LoadFigures } from './load-figures.js';

/** Options of {@link runCallLoad}. */
export interface CallLoadOptions {
  /** The hosted server's MCP endpoint. */
  url: URL;
  /** Concurrent clients (one MCP session each). */
  clients: number;
  /** Calls in total across all clients. */
  calls: number;
  /** Tools called in turn; each takes a string parameter `token` and returns it. */
  tools: readonly string[];
  /** Extra arguments of call number `index`; default none. */
  extraArgs?: (index: number) => Record<string, unknown>;
  /** Client-side bound of one call, in ms; default 60 000. */
  callTimeoutMs?: number;
  /** Stops starting new calls (calls in flight still settle). */
  signal?: AbortSignal;
}

/** Makes the calls and returns the figures once every call has settled. */
export async function runCallLoad(options: CallLoadOptions): Promise<LoadFigures> {
  const callTimeoutMs = options.callTimeoutMs ?? 60_000;
  const runId = randomBytes(4).toString('hex');
  const collector = new FigureCollector();
  let next = 0;
  const started = performance.now();

  const connect = async (): Promise<Client | undefined> => {
    while (!options.signal?.aborted) {
      const client = new Client({ name: 'mcphost-faults', version: '1.0.0' });
      try {
        await client.connect(
          new StreamableHTTPClientTransport(options.url, { fetch: loopbackFetch }),
        );
        return client;
      } catch {
        await client.close().catch(() => undefined);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    return undefined;
  };

  const worker = async () => {
    let client = await connect();
    while (client && !options.signal?.aborted) {
      const index = next++;
      if (index >= options.calls) break;
      const token = `${TOKEN_PREFIX}${runId}-${index}-${randomBytes(3).toString('hex')}`;
      const name = options.tools[index % options.tools.length] ?? '';
      const begin = performance.now();
      const answer = await settleCall(
        client.callTool({ name, arguments: { token, ...options.extraArgs?.(index) } }, undefined, {
          timeout: callTimeoutMs,
          maxTotalTimeout: callTimeoutMs,
        }) as Promise<CallToolResult>,
        token,
        callTimeoutMs + 5_000,
      );
      collector.add(answer.kind, performance.now() - begin, answer.message);
      if (answer.kind === 'transport' || answer.kind === 'hang') {
        await client.close().catch(() => undefined);
        client = await connect();
      }
    }
    await client?.close().catch(() => undefined);
  };

  await Promise.all(Array.from({ length: options.clients }, worker));
  return collector.figures(performance.now() - started);
}

/** The classified outcome, or `hang` if the client's own timeout failed to fire within `guardMs`. */
async function settleCall(
  call: Promise<CallToolResult>,
  token: string,
  guardMs: number,
): Promise<ClassifiedAnswer> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<ClassifiedAnswer>((resolve) => {
    timer = setTimeout(
      () => resolve({ kind: 'hang', message: `no answer within ${guardMs} ms` }),
      guardMs,
    );
  });
  try {
    return await Promise.race([
      call.then(
        (result) => classifyResult(result, token),
        (error: unknown) => classifyThrown(error),
      ),
      guard,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
