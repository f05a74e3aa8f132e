/**
 * Newline-delimited JSON framing. One message per line; a line longer than the
 * limit, not JSON, or not of a known shape is a protocol fault: the reader
 * reports it once and reads nothing more (the peer is no longer trusted).
 */
import type { z } from 'zod';

/** Default largest line either side accepts, in bytes: 16 MiB. */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

/** Why a stream stopped being trusted. */
export class ProtocolFault extends Error {
  readonly code = 'ERR_PROTOCOL';
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolFault';
  }
}

export interface LineReaderOptions<T> {
  /** Schema every line must satisfy. */
  schema: z.ZodType<T>;
  /** Largest accepted line in bytes (newline excluded); default 16 MiB. */
  maxLineBytes?: number;
  onMessage: (message: T) => void;
  /** Called once, at the first fault; nothing is delivered afterwards. */
  onFault: (fault: ProtocolFault) => void;
}

/**
 * Splits a byte stream into lines and parses each one. Feed it chunks with
 * `push`; it keeps at most one partial line (bounded by `maxLineBytes`).
 */
export class LineReader<T> {
  readonly #schema: z.ZodType<T>;
  readonly #maxLineBytes: number;
  readonly #onMessage: (message: T) => void;
  readonly #onFault: (fault: ProtocolFault) => void;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #faulted = false;

  constructor(options: LineReaderOptions<T>) {
    const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    if (!Number.isInteger(maxLineBytes) || maxLineBytes <= 0) {
      throw new TypeError('LineReader: maxLineBytes must be a positive integer');
    }
    this.#schema = options.schema;
    this.#maxLineBytes = maxLineBytes;
    this.#onMessage = options.onMessage;
    this.#onFault = options.onFault;
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (!this.#faulted) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) {
        this.#keepPartial(chunk.subarray(start));
        return;
      }
      const piece = chunk.subarray(start, newline);
      start = newline + 1;
      if (this.#pendingBytes + piece.length > this.#maxLineBytes) {
        this.#fault(`line longer than ${this.#maxLineBytes} bytes`);
        return;
      }
      let line: Buffer = piece;
      if (this.#pending.length > 0) {
        this.#pending.push(piece);
        line = Buffer.concat(this.#pending, this.#pendingBytes + piece.length);
        this.#pending = [];
        this.#pendingBytes = 0;
      }
      this.#deliver(line);
    }
  }

  #keepPartial(rest: Buffer): void {
    if (rest.length === 0) return;
    if (this.#pendingBytes + rest.length > this.#maxLineBytes) {
      this.#fault(`line longer than ${this.#maxLineBytes} bytes`);
      return;
    }
    // Copy: the caller may reuse the chunk's memory.
    this.#pending.push(Buffer.from(rest));
    this.#pendingBytes += rest.length;
  }

  #deliver(line: Buffer): void {
    if (line.length === 0) return;
    let json: unknown;
    try {
      json = JSON.parse(line.toString('utf8'));
    } catch {
      this.#fault(`line is not JSON: ${preview(line)}`);
      return;
    }
    let parsed: z.ZodSafeParseResult<T>;
    try {
      parsed = this.#schema.safeParse(json);
    } catch (error) {
      // A check that throws (a stack overflow deep in a schema) is a refusal, never an escape.
      const reason = error instanceof Error ? error.message : String(error);
      this.#fault(`message could not be checked (${reason}): ${preview(line)}`);
      return;
    }
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
      this.#fault(`unexpected message${where}: ${issue?.message ?? 'invalid'}: ${preview(line)}`);
      return;
    }
    this.#onMessage(parsed.data);
  }

  #fault(message: string): void {
    this.#faulted = true;
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#onFault(new ProtocolFault(message));
  }
}

function preview(line: Buffer): string {
  const text = line.subarray(0, 120).toString('utf8');
  return JSON.stringify(line.length > 120 ? `${text}…` : text);
}

/** One message as a line. JSON.stringify never emits a raw newline. */
export function encodeMessage(message: object): string {
  return `${JSON.stringify(message)}\n`;
}
