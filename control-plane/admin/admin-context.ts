/**
 * What the admin routes work with. Narrow on purpose: routes see the store
 * and the running parts only through these shapes.
 */
import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import type { AddressConfig, Config } from '../config.js';
import { parseJsonBody, readBody } from '../http/index.js';
import { parseInput } from '../http/index.js';
import type { EntryRunner, ToolInvoker } from '../invocation/index.js';
import type { Store } from '../store/index.js';
import type { ConfigCache } from '../store/index.js';
import type { EngineStats, InvocationLimits, LimitCeilings, OwnLimits } from '../sandbox/index.js';
import type {
  AddressThrottle,
  ConcurrencyLimit,
  CookieSealer,
  OidcSignIn,
} from '../identity/index.js';
import type { AuditTrail } from './audit-trail.js';

/** A syntax problem in tool code, with 1-based position. */
export interface SyntaxProblem {
  message: string;
  line: number;
  column: number;
}

/** Authorization Server metadata as validated at save time. */
export interface FetchedAsMetadata {
  metadata: { issuer: string; jwks_uri: string; [field: string]: unknown };
  warnings: string[];
}

/** Pool operations the admin API exposes (the SandboxManager). */
export interface PoolAdministration {
  stats(): unknown[];
  serverStats(): unknown[];
  budgetStats(): { maxTotal: number; limitCeilings: LimitCeilings };
  /** What a tool with `tool` limits on a server with `server` limits runs with now (every ceiling applied). */
  effectiveLimits(tool: OwnLimits | undefined, server: OwnLimits | undefined): InvocationLimits;
  /** Sizes set per unit (every stored one is applied at start and on change). */
  sizes(): { unit: string; minWarm: number; maxSize: number }[];
  /** Throws ERR_VALIDATION when the size breaks the caps; changes nothing. */
  checkPoolSize(unit: string, settings: { minWarm: number; maxSize: number }): void;
  configurePool(unit: string, settings: { minWarm: number; maxSize: number }): unknown;
  drain(unit: string): Promise<void> | void;
}

/**
 * Renders prompts and reads resources through the path MCP clients take
 * (invocation/entry-runner.ts): the admin API's previews run what a client's
 * `prompts/get` and `resources/read` would.
 */
export type EntryRunnerPort = Pick<EntryRunner, 'renderPrompt' | 'readResource'>;

/** What signing in to the dashboard uses. */
export interface SignInServices {
  /** Sign-in attempts (password or single sign-on) per client network. */
  throttle: AddressThrottle;
  /** Wrong admin bearers per client network: as many as sign-ins, counted apart (bearer-guard.ts). */
  bearers: AddressThrottle;
  /** Password hashing and checking at once (scrypt holds ~32 MiB each on the thread pool). */
  passwordWork: ConcurrencyLimit;
  /** OpenID Connect sign-in, when ADMIN_OIDC_ISSUER is set. */
  oidc?: {
    flow: OidcSignIn;
    /** Seals the flow's state, nonce and verifier into a cookie. */
    sealer: CookieSealer;
    issuer: string;
  };
}

/**
 * What the admin API reads of the configuration (app/component-settings.ts
 * builds it): the servers' addresses, the body limit, the sign-in and cookie
 * settings, the pool defaults it shows, the refusal buckets' width.
 */
export type AdminSettings = AddressConfig &
  Pick<
    Config,
    | 'maxBodyBytes'
    | 'adminOidcIssuer'
    | 'adminOidcLabel'
    | 'adminCookieSecure'
    | 'adminSessionMaxHours'
    | 'adminSessionIdleMinutes'
    | 'invocationRefusalBucketSeconds'
    | 'poolMinWarm'
    | 'poolMaxSize'
    | 'poolMaxSizeCap'
    | 'genericPoolSize'
    | 'poolMaxInvocations'
    | 'poolHeapRetireShare'
    | 'poolIdleTtlMs'
  >;

export interface AdminContext {
  /** The settings the admin API reads, not the whole configuration. */
  config: AdminSettings;
  store: Store;
  cache: ConfigCache;
  invoker: ToolInvoker;
  entries: EntryRunnerPort;
  pools: PoolAdministration;
  flushInvocationLog(): Promise<void>;
  checkSyntax(code: string): SyntaxProblem | null;
  fetchAuthorizationServerMetadata(url: string): Promise<FetchedAsMetadata>;
  /** OCI runtimes the sandbox engine has now (a server's `runtime` must be one of them). */
  sandboxRuntimes(): Promise<string[]>;
  /** The Docker engines of DOCKER_ENGINES and what is placed on each; undefined with one engine. */
  engines?: () => EngineStats[];
  /** Records admin writes, refusals and sign-ins. */
  audit: AuditTrail;
  signIn: SignInServices;
}

/** Reads, parses and validates a JSON request body in one step. */
export async function readJson<S extends z.ZodType>(
  req: IncomingMessage,
  maxBytes: number,
  schema: S,
  what: string,
): Promise<z.output<S>> {
  return parseInput(schema, parseJsonBody(await readBody(req, maxBytes)) ?? {}, what);
}
