/**
 * Reads a request body with a size bound and parses it as JSON. Bodies are
 * parsed once, here, before any handler sees them.
 */
import type { IncomingMessage } from 'node:http';
import { McphostError } from '../errors.js';

/** Reads the whole body; fails with ERR_PAYLOAD_TOO_LARGE past `maxBytes`. */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume();
    throw new BodyTooLarge(maxBytes);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      req.resume();
      throw new BodyTooLarge(maxBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** A body over the limit (413). */
export class BodyTooLarge extends McphostError {
  constructor(maxBytes: number) {
    super(
      'ERR_PAYLOAD_TOO_LARGE',
      `request body is larger than ${maxBytes} bytes (MAX_BODY_BYTES)`,
    );
  }
}

/** Parses JSON; an empty body is `undefined`; bad JSON is ERR_VALIDATION naming the position. */
export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new McphostError(
      'ERR_VALIDATION',
      `request body is not valid JSON: ${(error as Error).message}`,
    );
  }
}
