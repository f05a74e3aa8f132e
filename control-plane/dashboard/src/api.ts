/**
 * The admin REST API as the dashboard calls it: the admin token (kept in
 * session storage, sent as a bearer header) and errors as `ApiError` with the
 * API's stable code, message and details.
 */

const TOKEN_KEY = 'mcphost.adminToken';

/** An error answer of the admin API. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The token of this browser tab's session, if signed in. */
export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Keeps the token for this tab only (closed tab, token gone). */
export function storeToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

/** Signs out. */
export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** Calls the admin API with the stored token; resolves the JSON answer (undefined for 204). */
export async function api<T>(
  method: string,
  path: string,
  body?: unknown,
  token = storedToken(),
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
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
    throw new ApiError(
      response.status,
      error?.code ?? `HTTP_${response.status}`,
      error?.message ?? `The control plane answered ${response.status}.`,
      error?.details,
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
