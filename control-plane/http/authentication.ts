/**
 * The outcome of checking a request's credentials (a bearer token, an API
 * key, or none) for one hosted server: who is calling, or the response that
 * refuses the request (status, headers such as the RFC 6750 bearer
 * challenge, body).
 */
import type { Caller } from '../invocation/index.js';

export type Authentication =
  | { ok: true; caller: Caller }
  | {
      ok: false;
      status: number;
      headers: Record<string, string>;
      body: unknown;
      /** What metrics count the refusal under: an RFC 6750 error, missing_token or temporarily_unavailable. */
      reason: string;
    };
