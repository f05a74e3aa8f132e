/**
 * The harness's outgoing lines. Results and call arguments arrive already
 * serialised (by JSON.stringify inside the tool's context), so they are spliced
 * into the line instead of being parsed and serialised a second time.
 */
import { getHeapStatistics } from 'node:v8';
import {
  encodeMessage,
  PROTOCOL_VERSION,
  type CallOperation,
  type LogLevel,
  type WireError,
} from '../src/protocol/index.js';

/** The first line the harness writes. */
export function readyLine(): string {
  return encodeMessage({ type: 'ready', protocol: PROTOCOL_VERSION, node: process.version });
}

/** A captured console line. */
export function logLine(invocation: string, level: LogLevel, text: string): string {
  return encodeMessage({ type: 'log', invocation, level, text });
}

/** One `sdk.progress(...)`. */
export function progressLine(
  invocation: string,
  progress: number,
  total: number | undefined,
  message: string | undefined,
): string {
  return encodeMessage({ type: 'progress', invocation, progress, total, message });
}

/** `sdk.closeStream()`: end the response carrying the call (sent once per invocation). */
export function disconnectLine(invocation: string): string {
  return encodeMessage({ type: 'disconnect', invocation });
}

/** The invocation waits on nothing but its requests to the calling client. */
export function waitingLine(invocation: string): string {
  return encodeMessage({ type: 'waiting', invocation });
}

/** A brokered request; `argsJson` must be one line of JSON. */
export function callLine(
  invocation: string,
  call: number,
  op: CallOperation,
  argsJson: string,
): string {
  return `{"type":"call","invocation":${JSON.stringify(invocation)},"call":${call},"op":"${op}","args":${argsJson}}\n`;
}

/** A successful result; `valueJson` must be one line of JSON. */
export function okResultLine(invocation: string, valueJson: string): string {
  return `{"type":"result","invocation":${JSON.stringify(invocation)},"ok":true,"heap":${heapUsedBytes()},"value":${valueJson}}\n`;
}

/** A result of content blocks; `contentJson` must be one line of JSON, an array of checked blocks. */
export function contentResultLine(invocation: string, contentJson: string): string {
  return `{"type":"result","invocation":${JSON.stringify(invocation)},"ok":true,"heap":${heapUsedBytes()},"value":null,"content":${contentJson}}\n`;
}

/** A failed result. */
export function errorResultLine(invocation: string, error: WireError): string {
  return encodeMessage({ type: 'result', invocation, ok: false, error, heap: heapUsedBytes() });
}

/** V8 heap in use now; cheap (counters, no walk of the heap and no /proc read), once per result. */
function heapUsedBytes(): number {
  return getHeapStatistics().used_heap_size;
}
