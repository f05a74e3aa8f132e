/**
 * MCP sessions as the store keeps them, shared by every control-plane
 * replica: the session row (its state is a JSON document the MCP layer owns),
 * the events of its response streams (kept so a stream can be resumed on any
 * replica), and the signals replicas send each other about them. Signals carry
 * ids only: the receiver reads what it needs from the tables, and a payload
 * stays far below PostgreSQL's 8000-byte NOTIFY limit.
 */
import { z } from 'zod';

/** One MCP session. */
export interface McpSessionRow {
  id: string;
  /** The hosted server the session belongs to. */
  subdomain: string;
  /** Who opened it (the MCP layer's caller identity). */
  callerKey: string;
  /** What its requests are counted against (rate limits). */
  quotaKey: string;
  /** JSON text the MCP layer owns: protocol version, client capabilities and info, log level, subscriptions. */
  state: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601; sessions idle too long are pruned. */
  lastUsedAt: string;
}

/** The quotas a new session is stored within (session-queries.ts: admitMcpSession). */
export interface McpSessionQuotas {
  /** Sessions one caller (quota key) may hold on one server. */
  perCaller: number;
  /** Sessions one server may hold, over all its callers. */
  perServer: number;
  /** Another caller's session used within this many milliseconds is in use: never replaced. */
  inUseMs: number;
}

/** One event of a response stream; seq 0 with message "" opens the stream. */
export interface McpStreamEventRow {
  sessionId: string;
  streamId: string;
  seq: number;
  /** JSON text of a JSON-RPC message, or "" for the opening marker. */
  message: string;
  /** True on the stream's last event. */
  final: boolean;
}

/**
 * What one replica tells the others about sessions; `ended`: closed (DELETE,
 * idle, its server changed); `evicted`: replaced by a newer session past a
 * quota (a call it is running finishes first); `resync`: the listener
 * reconnected, anything may have been missed.
 */
export type SessionSignal =
  | { kind: 'changed'; session: string }
  | { kind: 'ended'; session: string }
  | { kind: 'evicted'; session: string }
  | { kind: 'events'; session: string; stream: string }
  | { kind: 'message'; session: string; ref: string }
  | { kind: 'resync' };

/** The signals that travel between replicas (`resync` is made by the receiver itself). */
export type SentSessionSignal = Exclude<SessionSignal, { kind: 'resync' }>;

const sentSignalSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('changed'), session: z.string() }),
  z.object({ kind: z.literal('ended'), session: z.string() }),
  z.object({ kind: z.literal('evicted'), session: z.string() }),
  z.object({ kind: z.literal('events'), session: z.string(), stream: z.string() }),
  z.object({ kind: z.literal('message'), session: z.string(), ref: z.string() }),
]);

const payloadSchema = z.object({ origin: z.string(), signal: sentSignalSchema });

/** The NOTIFY payload of a signal sent by the store whose feed is `origin`. */
export function encodeSessionSignal(origin: string, signal: SentSessionSignal): string {
  return JSON.stringify({ origin, signal });
}

/** A received payload as its origin and signal, or undefined when it is not one. */
export function decodeSessionSignal(
  payload: string,
): { origin: string; signal: SentSessionSignal } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return undefined;
  }
  const checked = payloadSchema.safeParse(parsed);
  return checked.success ? checked.data : undefined;
}
