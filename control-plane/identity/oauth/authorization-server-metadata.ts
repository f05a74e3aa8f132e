/**
 * Fetches and validates an Authorization Server's metadata (RFC 8414, or
 * OpenID Connect Discovery as a fallback). Used when an operator saves OAuth
 * 2.0 mode: everything wrong is reported at once, by name, so the settings
 * page can say exactly what to fix.
 */
import { z } from 'zod';
import { validationProblems } from '../../validation-problems.js';
import { fetchJsonDocument, type BoundedFetchResult } from './bounded-fetch.js';
import { metadataProblemError, NO_S256_WARNING, type TriedUrl } from './metadata-problems.js';
import { insecureUrlReason } from './secure-url.js';

/** The fields mcphost needs from an Authorization Server, in the order they are reported. */
export const REQUIRED_METADATA_FIELDS = [
  'issuer',
  'authorization_endpoint',
  'token_endpoint',
  'registration_endpoint',
  'jwks_uri',
] as const;

const urlField = z.url({ protocol: /^https?$/ });

/** Validated Authorization Server metadata; unknown members are kept. */
export const authorizationServerMetadataSchema = z.looseObject({
  issuer: urlField,
  authorization_endpoint: urlField,
  token_endpoint: urlField,
  registration_endpoint: urlField,
  jwks_uri: urlField,
  scopes_supported: z.array(z.string()).optional(),
  code_challenge_methods_supported: z.array(z.string()).optional(),
  id_token_signing_alg_values_supported: z.array(z.string()).optional(),
});

/** Authorization Server metadata as mcphost uses it. */
export type AuthorizationServerMetadata = z.infer<typeof authorizationServerMetadataSchema>;

/** Options for fetchAuthorizationServerMetadata. */
export interface FetchMetadataOptions {
  /** Accept http:// to 127.0.0.0/8, ::1 and localhost (development only). */
  allowInsecureLoopback: boolean;
  /** Deadline per request in milliseconds; default 5000. */
  timeoutMs?: number;
  /** Largest accepted document in bytes; default 262144 (256 KiB). */
  maxBytes?: number;
  /** Fetch implementation; default the global fetch. */
  fetch?: typeof fetch;
}

/** Metadata plus what is odd but not fatal (e.g. no S256 PKCE advertised). */
export interface FetchedMetadata {
  metadata: AuthorizationServerMetadata;
  /** The URL the metadata was read from. */
  metadataUrl: string;
  warnings: string[];
}

/**
 * Reads metadata from the URL as given first — operators paste the full
 * RFC 8414 / OIDC metadata URL, wherever it lives — and, only when that is not
 * a metadata document (an error status, not JSON, or JSON with none of the
 * metadata fields: an issuer's home page), from the RFC 8414 and OIDC
 * well-known locations derived from it. A document that is metadata but
 * incomplete is reported as such, naming the missing fields and its own URL.
 * Throws McphostError('ERR_OAUTH_METADATA') naming what is wrong, whether the
 * document is unreachable or invalid: this runs when the settings are saved,
 * and the operator is the one to fix them (422).
 */
export async function fetchAuthorizationServerMetadata(
  url: string,
  options: FetchMetadataOptions,
): Promise<FetchedMetadata> {
  if (typeof options?.allowInsecureLoopback !== 'boolean') {
    throw new TypeError(
      'fetchAuthorizationServerMetadata: options.allowInsecureLoopback must be a boolean',
    );
  }
  const limits = {
    timeoutMs: options.timeoutMs ?? 5000,
    maxBytes: options.maxBytes ?? 256 * 1024,
    fetch: options.fetch ?? globalThis.fetch,
  };
  const base = parseUrl(url);
  const insecure = insecureUrlReason(base, options.allowInsecureLoopback);
  if (insecure !== undefined)
    throw metadataProblemError({ kind: 'insecure-url', url, reason: insecure });

  const tried: TriedUrl[] = [];
  const given = await fetchJsonDocument(base, limits);
  const isWellKnown = base.pathname.includes('/.well-known/');
  // An unreachable origin is reported as is: the derived URLs share it.
  if (
    given.kind !== 'http-status' &&
    (isWellKnown || given.kind === 'failure' || looksLikeMetadata(given))
  ) {
    return validateDocument(base, given, options.allowInsecureLoopback);
  }
  tried.push({
    url: base.href,
    answer: given.kind === 'http-status' ? { status: given.status } : 'not-metadata',
  });
  for (const candidate of metadataCandidates(base)) {
    if (candidate.href === base.href) continue;
    const result = await fetchJsonDocument(candidate, limits);
    if (result.kind === 'http-status') {
      tried.push({ url: candidate.href, answer: { status: result.status } });
      continue;
    }
    return validateDocument(candidate, result, options.allowInsecureLoopback);
  }
  throw metadataProblemError({ kind: 'not-found', url, tried });
}

/** The well-known URLs to try for `base`, most specific first. */
export function metadataCandidates(base: URL): URL[] {
  if (base.pathname.includes('/.well-known/')) return [base];
  const path = base.pathname.replace(/\/+$/, '');
  const at = (pathname: string): URL => new URL(pathname, base.origin);
  const candidates = [at(`/.well-known/oauth-authorization-server${path}`)];
  if (path !== '') candidates.push(at(`/.well-known/openid-configuration${path}`));
  candidates.push(at(`${path}/.well-known/openid-configuration`));
  return candidates;
}

/** True for a JSON object carrying at least one of the metadata fields mcphost needs. */
function looksLikeMetadata(result: BoundedFetchResult): boolean {
  if (result.kind !== 'json') return false;
  const value = result.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return REQUIRED_METADATA_FIELDS.some((field) => field in value);
}

function validateDocument(
  metadataUrl: URL,
  result: Exclude<BoundedFetchResult, { kind: 'http-status' }>,
  allowInsecureLoopback: boolean,
): FetchedMetadata {
  const url = metadataUrl.href;
  if (result.kind === 'failure') {
    throw metadataProblemError({ kind: 'no-answer', url, reason: result.reason });
  }
  if (result.kind === 'not-json') {
    throw metadataProblemError({ kind: 'not-json', url, status: result.status });
  }
  const document = result.value;
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw metadataProblemError({ kind: 'not-object', url });
  }
  const record = document as Record<string, unknown>;
  const missing = REQUIRED_METADATA_FIELDS.filter(
    (field) => record[field] === undefined || record[field] === '',
  );
  if (missing.length > 0) {
    throw metadataProblemError({ kind: 'missing-fields', url, fields: missing });
  }
  const parsed = authorizationServerMetadataSchema.safeParse(document);
  if (!parsed.success) {
    const problems = validationProblems(parsed.error);
    // Named by field, as the missing ones are; `problems` says what is wrong with each.
    const invalid = [
      ...new Set(problems.map((problem) => problem.path.split('.')[0] || '(document)')),
    ];
    throw metadataProblemError({ kind: 'invalid-fields', url, fields: invalid, problems });
  }
  const metadata = parsed.data;
  const insecure = REQUIRED_METADATA_FIELDS.filter(
    (field) => insecureUrlReason(new URL(metadata[field]), allowInsecureLoopback) !== undefined,
  );
  if (insecure.length > 0) {
    throw metadataProblemError({ kind: 'insecure-fields', url, fields: insecure });
  }
  return { metadata, metadataUrl: url, warnings: collectWarnings(metadata, metadataUrl) };
}

function collectWarnings(metadata: AuthorizationServerMetadata, metadataUrl: URL): string[] {
  const warnings: string[] = [];
  if (!metadata.code_challenge_methods_supported?.includes('S256')) warnings.push(NO_S256_WARNING);
  // RFC 8414 §3.3 wants the issuer to match where metadata came from; a mismatch is
  // usually a proxy or trailing-slash difference, so it is reported, not fatal.
  if (metadataUrl.origin !== new URL(metadata.issuer).origin) {
    warnings.push(
      `the issuer ${metadata.issuer} is on a different origin than ${metadataUrl.href}`,
    );
  }
  return warnings;
}

function parseUrl(url: string): URL {
  try {
    return new URL(url);
  } catch {
    throw metadataProblemError({ kind: 'not-a-url', url });
  }
}
