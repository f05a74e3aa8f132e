/**
 * One GET of a small JSON document with a deadline and a size cap, for
 * Authorization Server metadata. Redirects are not followed: a redirect could
 * leave HTTPS, and an operator should configure the final URL.
 */
import { isMcphostError } from '../../errors.js';
import type { NoAnswerReason } from './metadata-problems.js';

/** What fetchJsonDocument needs; `fetch` is injectable for tests of odd transports. */
export interface BoundedFetchOptions {
  /** Whole-request deadline in milliseconds. */
  timeoutMs: number;
  /** Largest accepted body in bytes. */
  maxBytes: number;
  /** Fetch implementation; default the global fetch. */
  fetch: typeof fetch;
}

/** The outcome of one bounded GET; a `failure` says why there is no usable answer. */
export type BoundedFetchResult =
  | { kind: 'json'; status: number; value: unknown }
  | { kind: 'http-status'; status: number }
  /** A 2xx answer whose body is not JSON (an HTML page, say). */
  | { kind: 'not-json'; status: number }
  | { kind: 'failure'; reason: NoAnswerReason };

/** GETs `url` and parses the body as JSON, within the time and size limits. */
export async function fetchJsonDocument(
  url: URL,
  options: BoundedFetchOptions,
): Promise<BoundedFetchResult> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  let response: Response;
  try {
    response = await options.fetch(url, {
      method: 'GET',
      redirect: 'manual',
      headers: { accept: 'application/json' },
      signal,
    });
  } catch (error) {
    return { kind: 'failure', reason: fetchFailureOf(error, signal, options.timeoutMs) };
  }
  if (response.status < 200 || response.status > 299) {
    await response.body?.cancel().catch(() => undefined);
    return { kind: 'http-status', status: response.status };
  }
  let text: string;
  try {
    const body = await readLimited(response, options.maxBytes);
    if (body === undefined)
      return { kind: 'failure', reason: { kind: 'too-large', maxBytes: options.maxBytes } };
    text = body;
  } catch (error) {
    return { kind: 'failure', reason: fetchFailureOf(error, signal, options.timeoutMs) };
  }
  try {
    return { kind: 'json', status: response.status, value: JSON.parse(text) as unknown };
  } catch {
    return { kind: 'not-json', status: response.status };
  }
}

/** The body as UTF-8 text, or undefined once it exceeds `maxBytes`. */
export async function readLimited(
  response: Response,
  maxBytes: number,
): Promise<string | undefined> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function fetchFailureOf(error: unknown, signal: AbortSignal, timeoutMs: number): NoAnswerReason {
  if (signal.aborted) return { kind: 'timeout', timeoutMs };
  return networkFailureOf(error);
}

/**
 * What a fetch rejected with: the egress policy's refusal, or the network's
 * error code (undici's "fetch failed" carries it in `cause`).
 */
export function networkFailureOf(
  error: unknown,
): Extract<NoAnswerReason, { kind: 'refused' | 'unreachable' }> {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  // The egress policy refused the destination (see broker/http/guarded-fetch.ts): say why.
  if (isMcphostError(cause)) return { kind: 'refused', message: cause.message };
  const code = (cause as { code?: unknown } | undefined)?.code;
  const message = cause instanceof Error ? cause.message : String(cause);
  return { kind: 'unreachable', code: typeof code === 'string' ? code : message };
}

/** A short phrase for what a fetch rejected with, for messages about keys (remote-key-set.ts). */
export function describeNetworkFailure(error: unknown): string {
  const failure = networkFailureOf(error);
  return failure.kind === 'refused'
    ? `refused: ${failure.message}`
    : `unreachable (${failure.code})`;
}
