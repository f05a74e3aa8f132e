/**
 * sdk.http and fetch on the control-plane side: one request from tool code,
 * with redirects followed by hand (each hop dials through the guarded agent, so
 * each hop is checked), a total deadline, and a response size limit enforced
 * while reading. An error status is a normal response; only failures to get a
 * response throw. Bodies are UTF-8 text unless the call says base64 (fetch
 * with bytes to send, or asking for the response's exact bytes); the size
 * limit counts the raw bytes either way.
 */
import type { Agent, Dispatcher } from 'undici';
import {
  isBase64,
  type HttpRequestArgs,
  type HttpResponseValue,
} from '../../../src/protocol/index.js';
import { McphostError, cancelledError, isMcphostError } from '../../errors.js';

/** Limits of one sdk.http call. */
export interface HttpLimits {
  /** Per-connection resolve + handshake limit, in milliseconds. */
  connectTimeoutMs: number;
  /** Whole call, all redirects and the body included, in milliseconds. */
  totalTimeoutMs: number;
  /** Largest response body, in bytes. */
  maxResponseBytes: number;
  /** Redirects followed before ERR_HTTP_TOO_MANY_REDIRECTS. */
  maxRedirects: number;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);
const BODY_HEADERS = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'content-language',
]);

type Hop = {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
};

/** Performs one brokered HTTP request through `agent`. */
export async function performHttpRequest(
  agent: Agent,
  args: HttpRequestArgs,
  limits: HttpLimits,
  signal: AbortSignal,
): Promise<HttpResponseValue> {
  let hop: Hop = {
    url: parseTargetUrl(args.url),
    method: args.method,
    headers: { ...args.headers },
    body: requestBody(args),
  };
  const deadline = AbortSignal.timeout(limits.totalTimeoutMs);
  const combined = AbortSignal.any([signal, deadline]);
  try {
    for (let redirects = 0; ; redirects++) {
      const response = await agent.request({
        origin: hop.url.origin,
        path: `${hop.url.pathname}${hop.url.search}`,
        method: hop.method as Dispatcher.HttpMethod,
        headers: hop.headers,
        body: hop.body,
        signal: combined,
        headersTimeout: limits.totalTimeoutMs,
        bodyTimeout: limits.totalTimeoutMs,
      });
      const location = headerValue(response.headers.location);
      if (!REDIRECT_STATUSES.has(response.statusCode) || location === undefined) {
        return {
          status: response.statusCode,
          headers: flattenHeaders(response.headers),
          body: encodeBody(
            await readLimitedBody(response, hop.url, limits.maxResponseBytes),
            args.responseEncoding,
          ),
          url: hop.url.href,
          redirected: redirects > 0,
        };
      }
      await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      if (redirects >= limits.maxRedirects) {
        throw new McphostError(
          'ERR_HTTP_TOO_MANY_REDIRECTS',
          `HTTP request to ${hop.url.host} was redirected more than ${limits.maxRedirects} times`,
        );
      }
      hop = nextHop(hop, response.statusCode, location);
    }
  } catch (error) {
    throw translateError(error, hop.url, limits, {
      cancelled: signal.aborted,
      timedOut: deadline.aborted,
    });
  }
}

/** The request body as undici takes it: text as is, base64 decoded to its bytes. */
function requestBody(args: HttpRequestArgs): string | Buffer | undefined {
  if (args.body === undefined || args.bodyEncoding !== 'base64') return args.body;
  if (!isBase64(args.body)) {
    throw new McphostError(
      'ERR_INVALID_ARGUMENT',
      'body: bodyEncoding is base64 but the body is not base64',
    );
  }
  return Buffer.from(args.body, 'base64');
}

/** The response body as the call asked for it: UTF-8 text (the default) or base64 of the bytes. */
function encodeBody(bytes: Buffer, encoding: HttpRequestArgs['responseEncoding']): string {
  return encoding === 'base64' ? bytes.toString('base64') : bytes.toString('utf8');
}

function parseTargetUrl(text: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    throw new McphostError('ERR_INVALID_ARGUMENT', `url: "${text}" is not a valid absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new McphostError(
      'ERR_INVALID_ARGUMENT',
      `url: only http and https URLs are allowed, not ${url.protocol}`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new McphostError(
      'ERR_INVALID_ARGUMENT',
      'url: credentials in the URL are not supported; send a header',
    );
  }
  return url;
}

/** The next request after a redirect, following the Fetch standard's method and header rules. */
function nextHop(previous: Hop, status: number, location: string): Hop {
  const url = parseTargetUrl(location, previous.url);
  const toGet =
    (status === 303 && previous.method !== 'HEAD') ||
    ((status === 301 || status === 302) && previous.method === 'POST');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(previous.headers)) {
    const lower = name.toLowerCase();
    if (lower === 'host') continue;
    if (toGet && BODY_HEADERS.has(lower)) continue;
    // Credentials meant for one origin must not be handed to another.
    if (url.origin !== previous.url.origin && CREDENTIAL_HEADERS.has(lower)) continue;
    headers[name] = value;
  }
  return {
    url,
    method: toGet ? 'GET' : previous.method,
    headers,
    body: toGet ? undefined : previous.body,
  };
}

async function readLimitedBody(
  response: Dispatcher.ResponseData,
  url: URL,
  maxBytes: number,
): Promise<Buffer> {
  const tooLarge = (): McphostError =>
    new McphostError(
      'ERR_HTTP_TOO_LARGE',
      `HTTP response from ${url.host} is larger than ${maxBytes} bytes`,
    );
  const declared = Number(headerValue(response.headers['content-length']) ?? NaN);
  if (declared > maxBytes) {
    response.body.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      response.body.destroy();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Header values as one string each; repeated headers are joined with ", " (RFC 9110 §5.3). */
function flattenHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined)
      flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function translateError(
  error: unknown,
  url: URL,
  limits: HttpLimits,
  state: { cancelled: boolean; timedOut: boolean },
): McphostError {
  if (isMcphostError(error)) return error;
  if (state.cancelled) return cancelledError(`HTTP request to ${url.host}`);
  if (state.timedOut) {
    return new McphostError(
      'ERR_HTTP_TIMEOUT',
      `HTTP request to ${url.host} timed out after ${limits.totalTimeoutMs} ms`,
    );
  }
  const code =
    typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new McphostError(
      'ERR_HTTP_TIMEOUT',
      `connecting to ${url.host} timed out after ${limits.connectTimeoutMs} ms`,
      { cause: error },
    );
  }
  if (
    code === 'UND_ERR_INVALID_ARG' ||
    code === 'ERR_INVALID_CHAR' ||
    code === 'ERR_INVALID_HTTP_TOKEN'
  ) {
    return new McphostError(
      'ERR_INVALID_ARGUMENT',
      `HTTP request to ${url.host} is invalid: ${message}`,
      { cause: error },
    );
  }
  const why = code !== undefined && !message.includes(code) ? `${code}: ${message}` : message;
  return new McphostError('ERR_HTTP_FAILED', `HTTP request to ${url.host} failed: ${why}`, {
    cause: error,
  });
}
