/**
 * Admin API requests as a person or a script makes them: with the admin
 * token or a personal token (bearer), or a dashboard session (cookie and its
 * CSRF token), and the sign-in that gives a session. Shared by the tests of
 * accounts, sessions and the audit log.
 */
import { loopbackFetch } from './loopback-fetch.js';

/** Who sends a request, and what else it carries. */
export interface AdminRequestOptions {
  /** `Authorization: Bearer …` */
  bearer?: string;
  /** The session cookie, `name=value`. */
  cookie?: string;
  /** `X-CSRF-Token`. */
  csrf?: string;
  origin?: string;
  requestId?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** An answer: status, parsed JSON body (undefined when empty), headers. */
export interface AdminAnswer {
  status: number;
  body: any;
  headers: Headers;
}

/** One request to the admin side at `adminUrl`. */
export async function adminRequest(
  adminUrl: string,
  method: string,
  path: string,
  options: AdminRequestOptions = {},
): Promise<AdminAnswer> {
  const response = await loopbackFetch(`${adminUrl}${path}`, {
    method,
    headers: {
      ...(options.bearer === undefined ? {} : { authorization: `Bearer ${options.bearer}` }),
      ...(options.cookie === undefined ? {} : { cookie: options.cookie }),
      ...(options.csrf === undefined ? {} : { 'x-csrf-token': options.csrf }),
      ...(options.origin === undefined ? {} : { origin: options.origin }),
      ...(options.requestId === undefined ? {} : { 'x-request-id': options.requestId }),
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? JSON.parse(text) : undefined,
    headers: response.headers,
  };
}

/** A password sign-in: the answer, and the session cookie (`name=value`) and CSRF token it gave. */
export async function passwordSignIn(
  adminUrl: string,
  email: string,
  password: string,
): Promise<AdminAnswer & { cookie?: string; csrf?: string }> {
  const answer = await adminRequest(adminUrl, 'POST', '/api/auth/password', {
    body: { email, password },
  });
  const setCookie = answer.headers.getSetCookie();
  return {
    ...answer,
    cookie: setCookie.length > 0 ? setCookie[0]!.split(';')[0] : undefined,
    csrf: answer.body?.csrfToken,
  };
}
