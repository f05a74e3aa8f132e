/**
 * What the Streamable HTTP transport checks of a request before any message
 * reaches the protocol layer: the headers the specification requires of a
 * POST, GET or DELETE, and a POST body read once, bounded, parsed as JSON and
 * validated as JSON-RPC messages (the SDK's schema), each bounded in depth
 * (client-declarations.ts). Each failure is a
 * McphostError whose code the registry maps to the status and JSON-RPC code
 * the SDK's own transport answers with.
 */
import type { IncomingMessage } from 'node:http';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/core';
import {
  isJsonContentType,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
} from '@modelcontextprotocol/server';
import { McphostError } from '../errors.js';
import { readBody } from '../http/index.js';
import { checkBodyDepth } from './client-declarations.js';

/** Most messages of a batch (protocol versions before 2025-06-18), as the SDK v1 transport allowed. */
const MAX_BATCH_SIZE = 100;

/** The first protocol version without JSON-RPC batching: one POST, one message. */
const BATCHLESS_VERSION = '2025-06-18';

/** The messages of one POST; `batch` when the body was an array (protocol versions before 2025-06-18). */
export interface IncomingPost {
  messages: JSONRPCMessage[];
  batch: boolean;
}

/** Refuses a request whose `MCP-Protocol-Version` this server does not speak (absent is fine). */
export function checkProtocolVersion(req: IncomingMessage): void {
  const version = req.headers['mcp-protocol-version'];
  if (version === undefined) return;
  if (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    throw new McphostError(
      'ERR_BAD_REQUEST',
      `Bad Request: Unsupported protocol version: ${String(version)} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
    );
  }
}

/** A GET must accept an event stream. */
export function checkGetHeaders(req: IncomingMessage): void {
  if (!(req.headers.accept ?? '').includes('text/event-stream')) {
    throw new McphostError(
      'ERR_NOT_ACCEPTABLE',
      'Not Acceptable: Client must accept text/event-stream',
    );
  }
  checkProtocolVersion(req);
}

/**
 * Reads and checks a POST: it must accept both JSON and an event stream (a
 * comma-separated list, so a substring check is meant), carry a JSON body,
 * and hold one JSON-RPC message or a batch of at most 100.
 */
export async function readPost(req: IncomingMessage, maxBodyBytes: number): Promise<IncomingPost> {
  const accept = req.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    throw new McphostError(
      'ERR_NOT_ACCEPTABLE',
      'Not Acceptable: Client must accept both application/json and text/event-stream',
    );
  }
  if (!isJsonContentType(req.headers['content-type'] ?? null)) {
    throw new McphostError(
      'ERR_UNSUPPORTED_MEDIA_TYPE',
      'Unsupported Media Type: Content-Type must be application/json',
    );
  }
  const text = (await readBody(req, maxBodyBytes)).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new McphostError('ERR_PARSE', 'Parse error: Invalid JSON');
  }
  checkBodyDepth(text);
  const batch = Array.isArray(body);
  if (batch && (req.headers['mcp-protocol-version'] ?? '') >= BATCHLESS_VERSION) {
    throw new McphostError(
      'ERR_INVALID_REQUEST',
      `Invalid Request: protocol version ${String(req.headers['mcp-protocol-version'])} has no batches (removed in ${BATCHLESS_VERSION})`,
    );
  }
  const items: unknown[] = Array.isArray(body) ? body : [body];
  if (items.length === 0 || items.length > MAX_BATCH_SIZE) {
    throw new McphostError(
      'ERR_INVALID_REQUEST',
      `Invalid Request: a batch holds 1 to ${MAX_BATCH_SIZE} messages`,
    );
  }
  const messages: JSONRPCMessage[] = [];
  for (const item of items) {
    const parsed = JSONRPCMessageSchema.safeParse(item);
    if (!parsed.success) {
      throw new McphostError('ERR_INVALID_REQUEST', 'Invalid Request: not a JSON-RPC 2.0 message');
    }
    messages.push(parsed.data);
  }
  return { messages, batch };
}
