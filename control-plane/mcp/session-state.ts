/**
 * What a replica needs to serve a session another replica opened, as the
 * store keeps it (`mcp_sessions.state`): the client's hello (protocol version
 * agreed on, capabilities, client info), the capabilities announced for
 * prompts and resources (fixed for a session, though the server's entries may
 * have changed since), the log level and the resource subscriptions. The
 * caller and the server are columns of their own, checked on every request.
 */
import { LoggingLevelSchema } from '@modelcontextprotocol/core';
import type { LoggingLevel, ServerCapabilities } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { ClientHello } from './streamable-http-transport.js';

/** Settings of a session beyond the client's hello, which the client may change. */
export interface SessionSettings {
  /** Prompt, resource and completion capabilities announced at initialize. */
  features: ServerCapabilities;
  logLevel: LoggingLevel;
  /** Subscribed URI → name of the resource that served it. */
  subscriptions: [string, string][];
}

export interface SessionState extends SessionSettings {
  hello: ClientHello;
}

/** The defaults of a session whose server keeps no settings (tests' own SDK servers). */
export const DEFAULT_SETTINGS: SessionSettings = {
  features: {},
  logLevel: 'debug',
  subscriptions: [],
};

const stateSchema = z.object({
  hello: z.object({
    protocolVersion: z.string().min(1).max(64),
    capabilities: z.record(z.string(), z.unknown()),
    clientInfo: z.object({ name: z.string(), version: z.string() }).passthrough(),
  }),
  features: z.record(z.string(), z.unknown()),
  logLevel: LoggingLevelSchema,
  subscriptions: z.array(z.tuple([z.string(), z.string()])),
});

export function encodeSessionState(state: SessionState): string {
  return JSON.stringify(state);
}

/** The state a row holds; undefined when it is not one (the session is then treated as unknown). */
export function decodeSessionState(text: string): SessionState | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const checked = stateSchema.safeParse(parsed);
  return checked.success ? (checked.data as SessionState) : undefined;
}
