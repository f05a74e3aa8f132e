/**
 * The admin REST API as the dashboard calls it, with the credential of this
 * tab: either the session cookie of a signed-in account (sent by the browser
 * on same-origin requests; writes add the session's `X-CSRF-Token`) or the
 * admin token, kept in session storage and sent as a bearer header (a
 * browser never attaches one by itself, so it needs no CSRF token). Errors
 * come back as `ApiError` with the API's stable code, message and details.
 */

const TOKEN_KEY = 'mcphost.adminToken';
/** Methods that change nothing: the control plane asks no CSRF token for them. */
const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** The CSRF token of the signed-in session; held in memory, `GET /api/session` gives it again after a reload. */
let csrfToken: string | null = null;

/** An error answer of the admin API. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    /** From `Retry-After` on a 429, in seconds; undefined when not said. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The admin token of this browser tab, if it signed in with one. */
export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Keeps the token for this tab only (closed tab, token gone). */
export function storeToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

/** Forgets the admin token (signing out of a token sign-in). */
export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** Keeps the session's CSRF token for the writes that follow; null forgets it. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/**
 * Calls the admin API with this tab's credential (`token`, when given,
 * instead of the stored one; null for none); resolves the JSON answer
 * (undefined for 204).
 */
export async function api<T>(
  method: string,
  path: string,
  body?: unknown,
  explicitToken?: string | null,
): Promise<T> {
  const token = explicitToken === undefined ? storedToken() : explicitToken;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  else if (csrfToken && !SAFE_METHODS.has(method)) headers['x-csrf-token'] = csrfToken;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      // The session cookie rides along; the admin API is the page's own origin.
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'ERR_NETWORK', 'The control plane did not answer. Is it running?');
  }
  const text = await response.text();
  const parsed: unknown = text ? safeJson(text) : undefined;
  if (!response.ok) {
    const error = (parsed as { error?: { code?: string; message?: string; details?: unknown } })
      ?.error;
    const retryAfter = Number(response.headers.get('retry-after'));
    // This tab's credential stopped working mid-way (idle session, signed out elsewhere):
    // said in the user's terms, and the page stays so what was typed can be copied.
    const ended = response.status === 401 && explicitToken === undefined;
    throw new ApiError(
      response.status,
      error?.code ?? `HTTP_${response.status}`,
      ended
        ? 'You are no longer signed in (the session ended, or the token was replaced). Copy anything you typed, then reload the page to sign in again.'
        : (error?.message ?? `The control plane answered ${response.status}.`),
      error?.details,
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
    );
  }
  return parsed as T;
}

/** Encodes one path segment (subdomains, tool and secret names). */
export function segment(value: string): string {
  return encodeURIComponent(value);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
