/**
 * The thin adapter between the hosted side and the API-key core: a server in
 * `securityMode: "apikey"` admits a request whose key is one of its own,
 * active keys, and refuses anything else with 401 and an RFC 6750 style
 * challenge (`realm="mcphost"`; no `resource_metadata`, which belongs to
 * OAuth). The body is the JSON-RPC error every `/mcp` refusal carries. When
 * the store cannot be asked, 503 with Retry-After: the key may be fine.
 */
import type { IncomingMessage } from 'node:http';
import { isMcphostError, McphostError, type McphostErrorCode } from '../errors.js';
import type { ServerRecord } from '../store/index.js';
import {
  API_KEY_PROBLEM_MESSAGES,
  ApiKeyCache,
  ApiKeyVerifier,
  CredentialUseRecorder,
  type ApiKeyCacheOptions,
  type ApiKeyProblem,
  type ApiKeySource,
} from '../identity/index.js';
import { temporarilyUnavailable, type Authentication } from './authentication.js';
import { httpStatusFor, jsonRpcErrorBody } from './error-response.js';

/** What the API-key gate needs of the store. */
export interface ApiKeyStore extends ApiKeySource {
  touchCredentials(ids: readonly string[]): Promise<void>;
}

/** Options of an ApiKeyGate. */
export interface ApiKeyGateOptions {
  /** Where keys are looked up, changes followed and uses written (the store). */
  store: ApiKeyStore;
  /** Told about failures that answer no request (a `lastUsedAt` write). */
  onError(error: unknown, what: string): void;
  /** Cache limits (see ApiKeyCache); defaults apply. */
  cache?: ApiKeyCacheOptions;
  /** Shortest time, in ms, between two `lastUsedAt` writes of one key; default 60000. */
  touchIntervalMs?: number;
  /** How often, in ms, key uses are written; default 5000. */
  touchFlushEveryMs?: number;
  /** Milliseconds since the epoch; default Date.now. */
  now?: () => number;
}

/** What a 503 for a store that cannot be asked tells clients to wait, in seconds. */
const RETRY_AFTER_SECONDS = 1;

const CODE_OF_PROBLEM = {
  missing: 'ERR_UNAUTHORIZED',
  invalid: 'ERR_INVALID_TOKEN',
  revoked: 'ERR_INVALID_TOKEN',
  expired: 'ERR_INVALID_TOKEN',
} as const satisfies Record<ApiKeyProblem, McphostErrorCode>;

/** Checks `/mcp` requests of servers in API-key mode. */
export class ApiKeyGate {
  readonly #cache: ApiKeyCache;
  readonly #uses: CredentialUseRecorder;
  readonly #verifier: ApiKeyVerifier;

  constructor(options: ApiKeyGateOptions) {
    const now = options.now ?? Date.now;
    this.#cache = new ApiKeyCache(options.store, { now, ...options.cache });
    this.#uses = new CredentialUseRecorder({
      touch: (ids) => options.store.touchCredentials(ids),
      intervalMs: options.touchIntervalMs,
      flushEveryMs: options.touchFlushEveryMs,
      onError: (error) => options.onError(error, 'recording API key use'),
      now,
    });
    this.#verifier = new ApiKeyVerifier(this.#cache, this.#uses, now);
  }

  /** The caller a request's key names, or the refusal to send. */
  async authenticate(server: ServerRecord, req: IncomingMessage): Promise<Authentication> {
    let verdict;
    try {
      verdict = await this.#verifier.verify(server.subdomain, req.headers);
    } catch (error) {
      // The store is down or swamped: not the key's fault, so no 401 (a client would drop it).
      if (!isMcphostError(error, 'ERR_STORE') && !isMcphostError(error, 'ERR_NO_CAPACITY')) {
        throw error;
      }
      return temporarilyUnavailable(RETRY_AFTER_SECONDS, error);
    }
    if (verdict.ok) {
      return {
        ok: true,
        caller: { kind: 'apikey', keyId: verdict.key.id, label: verdict.key.label },
        ...(verdict.key.expiresAt === undefined
          ? {}
          : { expiresAt: new Date(verdict.key.expiresAt) }),
      };
    }
    const message = API_KEY_PROBLEM_MESSAGES[verdict.problem];
    const error = new McphostError(CODE_OF_PROBLEM[verdict.problem], message);
    return {
      ok: false,
      status: httpStatusFor(error.code),
      headers: { 'www-authenticate': apiKeyChallenge(verdict.problem) },
      body: jsonRpcErrorBody(error),
      reason: verdict.problem === 'missing' ? 'missing_token' : 'invalid_token',
    };
  }

  /** Stops following the store and writes the key uses still noted. */
  async close(): Promise<void> {
    this.#cache.close();
    await this.#uses.close();
  }
}

/** The `WWW-Authenticate` value: no error code when no key was sent (RFC 6750 §3.1). */
function apiKeyChallenge(problem: ApiKeyProblem): string {
  // The descriptions are our own constant ASCII text: nothing to escape.
  const description = `error_description="${API_KEY_PROBLEM_MESSAGES[problem]}"`;
  return problem === 'missing'
    ? `Bearer realm="mcphost", ${description}`
    : `Bearer realm="mcphost", error="invalid_token", ${description}`;
}
