/**
 * Reads a request body with a size bound and parses it as JSON. Bodies are
 * parsed once, here, before any handler sees them.
 */
import type { IncomingMessage } from 'node:http';
import { McphostError } from '../errors.js';

/**
 * Reads the whole body; fails with ERR_PAYLOAD_TOO_LARGE past `maxBytes`.
 * Events rather than `for await`: the async iterator costs ~20 µs a request,
 * a tenth of a warm MCP call's time in the control plane.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume();
    return Promise.reject(new BodyTooLarge(maxBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      // Past the limit: keep draining (so the answer can be sent), keep nothing.
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.resume();
      reject(new BodyTooLarge(maxBytes));
    };
    const onEnd = () => {
      req.off('error', onError);
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      req.off('data', onData);
      req.off('end', onEnd);
      reject(error);
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
  });
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
