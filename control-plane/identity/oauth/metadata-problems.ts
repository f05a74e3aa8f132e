/**
 * What an operator is told when OAuth 2.0 settings cannot be saved because
 * the Authorization Server's metadata cannot be read or used. The dashboard
 * shows each message after "Not saved:" under the Settings form, so each
 * names the form's own field ("OAuth Server URL") and says exactly what
 * happened: no connection, no answer in time, an HTTP status, an answer that
 * is not JSON, a document missing or misstating fields. A message never
 * speaks of "the metadata" as read when nothing was.
 */
import { McphostError } from '../../errors.js';

/** The Settings form's label of `oauthServerUrl` (dashboard settings-tab.ts), word for word. */
export const OAUTH_SERVER_URL_LABEL = 'OAuth Server URL';

/** Why a request for a metadata document got no usable answer. */
export type NoAnswerReason =
  /** The egress policy refused the address; `message` is its refusal. */
  | { kind: 'refused'; message: string }
  /** No connection (refused, DNS, TLS…); `code` is the network's (ECONNREFUSED, ENOTFOUND…). */
  | { kind: 'unreachable'; code: string }
  | { kind: 'timeout'; timeoutMs: number }
  | { kind: 'too-large'; maxBytes: number };

/** What one URL tried for metadata answered, when it was not a metadata document. */
export interface TriedUrl {
  url: string;
  /** An HTTP status other than 2xx, or a 2xx answer that is not metadata. */
  answer: { status: number } | 'not-metadata';
}

/** Everything that can stop OAuth 2.0 settings from being saved, as found. */
export type MetadataProblem =
  | { kind: 'not-a-url'; url: string }
  /** `reason` is secure-url.ts's: "<url> does not use HTTPS", "<url> is not an https URL"… */
  | { kind: 'insecure-url'; url: string; reason: string }
  | { kind: 'no-answer'; url: string; reason: NoAnswerReason }
  | { kind: 'not-found'; url: string; tried: readonly TriedUrl[] }
  | { kind: 'not-json'; url: string; status: number }
  | { kind: 'not-object'; url: string }
  | { kind: 'missing-fields'; url: string; fields: readonly string[] }
  | { kind: 'invalid-fields'; url: string; fields: readonly string[]; problems: unknown }
  | { kind: 'insecure-fields'; url: string; fields: readonly string[] };

const FIELD = OAUTH_SERVER_URL_LABEL;

/** The sentence for `problem` (no final full stop: the API's messages are clauses). */
export function describeMetadataProblem(problem: MetadataProblem): string {
  switch (problem.kind) {
    case 'not-a-url':
      return `the ${FIELD} ${JSON.stringify(problem.url)} is not a URL: give the Authorization Server's issuer (https://auth.example.com) or its metadata document URL`;
    case 'insecure-url':
      return `the ${FIELD} ${problem.reason}`;
    case 'no-answer':
      return noAnswer(problem.url, problem.reason);
    case 'not-found':
      return `no Authorization Server metadata was found at the ${FIELD}: ${problem.tried.map(describeTried).join('; ')}; give the issuer or its metadata document URL`;
    case 'not-json':
      return `${problem.url} answered HTTP ${problem.status}, but not with JSON, so no metadata was read: the ${FIELD} must be the Authorization Server's issuer or its metadata document URL`;
    case 'not-object':
      return `${problem.url} answered JSON that is not an object, so no metadata was read: the ${FIELD} must be the Authorization Server's issuer or its metadata document URL`;
    case 'missing-fields':
      return `the Authorization Server's metadata at ${problem.url} lacks ${list(problem.fields)}, which mcphost needs`;
    case 'invalid-fields':
      return `the Authorization Server's metadata at ${problem.url} has invalid ${list(problem.fields)}`;
    case 'insecure-fields':
      return `the Authorization Server's metadata at ${problem.url} gives ${list(problem.fields)} without HTTPS`;
  }
}

/** ERR_OAUTH_METADATA for `problem`, its details naming the URL and the fields concerned. */
export function metadataProblemError(problem: MetadataProblem): McphostError {
  return new McphostError('ERR_OAUTH_METADATA', describeMetadataProblem(problem), {
    details: detailsOf(problem),
  });
}

/** The warning when the metadata does not advertise PKCE with S256 (saved all the same). */
export const NO_S256_WARNING =
  "the Authorization Server's metadata does not list S256 in code_challenge_methods_supported: MCP clients require PKCE with S256, and may refuse to sign in";

function noAnswer(url: string, reason: NoAnswerReason): string {
  // `url` may be a well-known location derived from the field's value: named as itself.
  const check = `check the ${FIELD} and that the Authorization Server is running`;
  switch (reason.kind) {
    case 'refused':
      return `mcphost may not connect to ${url}, so no metadata was read: ${reason.message}`;
    case 'unreachable':
      return `could not connect to ${url} (${reason.code}), so no metadata was read: ${check}`;
    case 'timeout':
      return `${url} did not answer within ${reason.timeoutMs} ms, so no metadata was read: ${check}`;
    case 'too-large':
      return `${url} answered with more than ${reason.maxBytes} bytes, more than a metadata document may have: check the ${FIELD}`;
  }
}

function describeTried(tried: TriedUrl): string {
  return tried.answer === 'not-metadata'
    ? `${tried.url} answered, but not with metadata`
    : `${tried.url} answered HTTP ${tried.answer.status}`;
}

function list(fields: readonly string[]): string {
  if (fields.length <= 1) return fields.join('');
  return `${fields.slice(0, -1).join(', ')} and ${fields.at(-1)}`;
}

function detailsOf(problem: MetadataProblem): Record<string, unknown> {
  switch (problem.kind) {
    case 'not-found':
      return {
        url: problem.url,
        tried: problem.tried.map((tried) =>
          tried.answer === 'not-metadata'
            ? `${tried.url} (not metadata)`
            : `${tried.url} (HTTP ${tried.answer.status})`,
        ),
      };
    case 'missing-fields':
      return { url: problem.url, missing: [...problem.fields] };
    case 'invalid-fields':
      return { url: problem.url, invalid: [...problem.fields], problems: problem.problems };
    case 'insecure-fields':
      return { url: problem.url, insecure: [...problem.fields] };
    default:
      return { url: problem.url };
  }
}
