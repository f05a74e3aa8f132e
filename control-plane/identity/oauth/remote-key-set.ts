/**
 * The Authorization Server's signing keys, as jose's remote key set holds
 * them (cached, refetched on an unknown `kid` at most once per cooldown),
 * with every way the key set itself can fail reported as
 * ERR_AUTH_SERVER_UNAVAILABLE naming the URL and why: not the caller's
 * fault, so the HTTP layer answers 503 ("try again"), not 401 (which sends a
 * client off to a new authorization).
 *
 * Only what is actually thrown counts (jose 6, undici, WebCrypto):
 * - the fetch rejects with a TypeError — the Fetch standard's network error;
 *   undici says "fetch failed" with the reason (refused, DNS, the egress
 *   policy's refusal) in `cause`, or "terminated" when the body is cut short;
 * - jose throws JWKSTimeout (no answer within the deadline), a plain
 *   JOSEError (an answer other than 200 OK, or not JSON) or JWKSInvalid (not
 *   a key set, or a private key in it);
 * - WebCrypto rejects a key it cannot import (an EC point off its curve, an
 *   RSA key without `e`) with a DOMException;
 * - a key set over the size cap, and an RSA key under 2048 bits, which jose
 *   refuses with a bare TypeError that cannot be told from a bug: both are
 *   checked here first.
 * Anything else is rethrown untouched: an unexpected exception is a bug and
 * must surface as one (a 500 and a log line), not as an outage of the AS.
 */
import { createRemoteJWKSet, customFetch, errors, type JWTVerifyGetKey } from 'jose';
import { McphostError } from '../../errors.js';
import { describeNetworkFailure, readLimited } from './bounded-fetch.js';
import { insecureUrlReason } from './secure-url.js';

/** Smallest RSA key jose accepts for RS and PS signatures, in bits. */
const MIN_RSA_MODULUS_BITS = 2048;

/** Options of createRemoteKeySet, all required (the verifier passes them); units in the names. */
export interface RemoteKeySetOptions {
  /** Least time between refetches triggered by an unknown `kid`, in ms. */
  cooldownMs: number;
  /** Longest a fetched key set is used before refetching, in ms. */
  cacheMaxAgeMs: number;
  /** Deadline of one fetch (answer and body), in ms. */
  timeoutMs: number;
  /** Largest key set accepted, in bytes (jose itself reads any size). */
  maxBytes: number;
  /** Fetch implementation (the service passes the egress-guarded one). */
  fetch: typeof fetch;
}

/** The key lookup for jwtVerify; it throws ERR_AUTH_SERVER_UNAVAILABLE when the key set fails. */
export function createRemoteKeySet(jwksUrl: URL, options: RemoteKeySetOptions): JWTVerifyGetKey {
  const jwksUri = jwksUrl.href;
  const remote = createRemoteJWKSet(jwksUrl, {
    cooldownDuration: options.cooldownMs,
    cacheMaxAge: options.cacheMaxAgeMs,
    timeoutDuration: options.timeoutMs,
    [customFetch]: keySetFetch(jwksUri, options.fetch, options.maxBytes),
  });
  return async (header, token) => {
    let key: Awaited<ReturnType<JWTVerifyGetKey>>;
    try {
      key = await remote(header, token);
    } catch (error) {
      throw keySetFailure(jwksUri, error, options.timeoutMs);
    }
    const bits = rsaModulusBits(key);
    if (bits !== undefined && bits < MIN_RSA_MODULUS_BITS) {
      throw keySetUnavailable(
        jwksUri,
        `key ${JSON.stringify(header.kid ?? '')} is an RSA key of ${bits} bits; at least ${MIN_RSA_MODULUS_BITS} are required`,
      );
    }
    return key;
  };
}

/**
 * Refuses a stored `jwks_uri` the current policy no longer accepts (plain
 * HTTP saved while OAUTH_ALLOW_INSECURE_LOOPBACK was on): tokens cannot be
 * checked until the settings are saved again. Call it before
 * createAccessTokenVerifier, for which such a URL is misuse (a TypeError).
 */
export function checkStoredKeySetUrl(jwksUri: string, allowInsecureLoopback: boolean): void {
  if (!URL.canParse(jwksUri)) throw keySetUnavailable(jwksUri, 'the stored URL is not a URL');
  const insecure = insecureUrlReason(new URL(jwksUri), allowInsecureLoopback);
  if (insecure !== undefined) {
    throw keySetUnavailable(
      jwksUri,
      `no longer accepted (save the OAuth settings again): ${insecure}`,
    );
  }
}

function keySetUnavailable(jwksUri: string, reason: string, cause?: unknown): McphostError {
  return new McphostError(
    'ERR_AUTH_SERVER_UNAVAILABLE',
    `authorization server keys at ${jwksUri}: ${reason}`,
    cause === undefined ? undefined : { cause },
  );
}

/** What the remote key set threw, as ERR_AUTH_SERVER_UNAVAILABLE when the key set failed; else unchanged. */
function keySetFailure(jwksUri: string, error: unknown, timeoutMs: number): unknown {
  if (error instanceof errors.JWKSTimeout) {
    return keySetUnavailable(jwksUri, `no answer within ${timeoutMs} ms`, error);
  }
  if (error instanceof errors.JWKSInvalid) {
    return keySetUnavailable(jwksUri, `not a usable key set (${error.message})`, error);
  }
  // The base class itself, not a subclass: jose's "not 200 OK" and "not JSON".
  if (error instanceof errors.JOSEError && error.code === errors.JOSEError.code) {
    return keySetUnavailable(jwksUri, error.message, error);
  }
  if (error instanceof DOMException) {
    return keySetUnavailable(jwksUri, `a key cannot be imported (${error.message})`, error);
  }
  return error;
}

/**
 * jose's fetch of the key set: network failures become ERR_AUTH_SERVER_UNAVAILABLE,
 * the body is capped. A deadline reached is rethrown as it is, for jose to
 * report as JWKSTimeout.
 */
function keySetFetch(jwksUri: string, fetchImpl: typeof fetch, maxBytes: number) {
  const unreachable = (error: unknown, signal: AbortSignal | null | undefined): unknown =>
    signal?.aborted !== true && error instanceof TypeError
      ? keySetUnavailable(jwksUri, describeNetworkFailure(error), error)
      : error;
  return async (url: string | URL, init?: RequestInit): Promise<Response> => {
    let response: Response;
    try {
      response = await fetchImpl(url, init);
    } catch (error) {
      throw unreachable(error, init?.signal);
    }
    if (response.status !== 200) {
      // jose reports the status without reading the body: release the connection here.
      await response.body?.cancel().catch(() => undefined);
      return new Response(null, { status: response.status, headers: response.headers });
    }
    let text: string | undefined;
    try {
      text = await readLimited(response, maxBytes);
    } catch (error) {
      throw unreachable(error, init?.signal);
    }
    if (text === undefined) throw keySetUnavailable(jwksUri, `larger than ${maxBytes} bytes`);
    return new Response(text, { status: response.status, headers: response.headers });
  };
}

/** The modulus size of an RSA key, undefined for any other key. */
function rsaModulusBits(key: unknown): number | undefined {
  if (!(key instanceof CryptoKey)) return undefined;
  const modulusLength = (key.algorithm as Partial<RsaHashedKeyAlgorithm>).modulusLength;
  return typeof modulusLength === 'number' ? modulusLength : undefined;
}
