/**
 * The whole configuration of the control plane, as one table: environment
 * name, meaning, default and parser. Read once at boot (environment first,
 * then a `.env` file in the working directory), validated, frozen. A bad value
 * stops the start with a message naming the variable.
 *
 * This table is the only place a default is written. Components (sandbox,
 * broker, pools) take every value as a required option and never fall back
 * on a number of their own; the composition root hands them the configured
 * values (`app/component-settings.ts`), and a test or script that wants "the
 * defaults" asks `defaultConfig()` — the same table, parsed with nothing set.
 * Required options were chosen over components importing this table: the
 * sandbox and broker depend on nothing but `errors.ts`, and a test sees every
 * value it runs with.
 */
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
} from 'node:fs';
import { parseEnv } from 'node:util';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { MAX_SOCKET_ROOT_BYTES } from './sandbox/index.js';
import { McphostError } from './errors.js';
import { parseEngineAddress, type EngineAddress } from './engine-address.js';
import { describeProblems } from './validation-problems.js';

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const nonNegativeInt = z.coerce.number().int().nonnegative();
const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => ['true', '1', 'yes'].includes(v));
const csv = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0),
);

/** The two address forms of a hosted server (docs/addresses.md). */
export const ADDRESS_FORMS = ['host', 'path'] as const;
export type AddressForm = (typeof ADDRESS_FORMS)[number];

/** ROUTING: which address forms are on, as flags; at least one. */
const addressForms = csv
  .transform((forms) => forms.map((form) => form.toLowerCase()))
  .refine((forms) => forms.length > 0, 'names no form: host, path, or host,path')
  .refine(
    (forms) => forms.every((form) => (ADDRESS_FORMS as readonly string[]).includes(form)),
    'each form is host or path',
  )
  .refine((forms) => new Set(forms).size === forms.length, 'names a form twice')
  .transform((forms) =>
    Object.freeze({ host: forms.includes('host'), path: forms.includes('path') }),
  );

/**
 * PUBLIC_URL: an absolute http(s) URL, nothing but an origin and a path prefix.
 * The prefix may not begin with /api: `/api/servers/{sub}/mcp` would sit among
 * the admin API's own routes.
 */
const publicListenerAddress = z
  .string()
  .transform((value) => value.replace(/\/+$/, ''))
  .superRefine((value, context) => {
    const problem = listenerUrlProblem(value);
    if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
  });

/** PUBLIC_URL parsed with `{port}` standing for a port number. */
function parseListenerUrl(value: string, port = 1): URL {
  return new URL(value.replaceAll('{port}', String(port)));
}

/** What makes a PUBLIC_URL unusable, or undefined. */
function listenerUrlProblem(value: string): string | undefined {
  if (value.includes('{subdomain}')) {
    return 'names no server: {subdomain} belongs in PUBLIC_URL_TEMPLATE';
  }
  if (!URL.canParse(value.replaceAll('{port}', '1'))) return 'must be an absolute URL';
  const url = parseListenerUrl(value);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http(s) URL';
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    return 'must be an origin with at most a path prefix (no query, fragment or user)';
  }
  if (/^\/api(\/|$)/.test(url.pathname)) {
    return 'its path prefix may not begin with /api (the admin API lives there)';
  }
  // Addresses without the prefix are served too: a prefix of their own families would
  // make one address read as another.
  if (/^\/(servers|\.well-known)(\/|$)/.test(url.pathname)) {
    return 'its path prefix may not begin with /servers or /.well-known (path addresses live there)';
  }
  return undefined;
}

/**
 * Variables whose values are credentials: named in errors, never shown. Each
 * may instead be given as a file (`ADMIN_TOKEN_FILE=/run/secrets/admin_token`),
 * as Docker secrets and systemd credentials provide them.
 */
const SECRET_VARIABLES = new Set([
  'ADMIN_TOKEN',
  'METRICS_TOKEN',
  'MASTER_KEY',
  'DATABASE_URL',
  'ADMIN_OIDC_CLIENT_SECRET',
]);

/** Suffix naming the file that holds a secret variable's value. */
const FILE_SUFFIX = '_FILE';

/** Largest secret file read: these are tokens, keys and URLs, never documents. */
const SECRET_FILE_MAX_BYTES = 64 * 1024;

interface Entry<T> {
  env: string;
  doc: string;
  schema: z.ZodType<T, unknown>;
  /** Raw default, parsed like a configured value; undefined = unset. */
  default?: string;
  /** An older name still read when `env` is not set (scripts written before the rename). */
  formerEnv?: string;
}

function entry<T>(
  env: string,
  doc: string,
  schema: z.ZodType<T, unknown>,
  fallback?: string,
  formerEnv?: string,
): Entry<T> {
  return { env, doc, schema, default: fallback, formerEnv };
}

/** Every setting. Keep the README's configuration table in step with this. */
export const CONFIG_TABLE = {
  port: entry(
    'PORT',
    'public listener port (hosted servers, and the admin side unless ADMIN_PORT is set)',
    port,
    '8080',
  ),
  adminPort: entry(
    'ADMIN_PORT',
    'separate admin listener port; unset = the admin side shares PORT',
    port.optional(),
  ),
  // Loopback by default: a new server has no authentication, so `npm start` must not
  // offer it to the network; compose.yaml and the control-plane image set 0.0.0.0.
  listenHost: entry(
    'LISTEN_HOST',
    'address the listeners bind to (0.0.0.0 for every interface, as compose.yaml sets)',
    z.string().min(1),
    '127.0.0.1',
  ),
  baseDomain: entry(
    'BASE_DOMAIN',
    'hosted servers answer at {subdomain}.{BASE_DOMAIN} (any port)',
    z
      .string()
      .regex(/^[a-z0-9.-]+$/i, 'must be a host name')
      .transform((v) => v.toLowerCase()),
    'localhost',
  ),
  publicUrlTemplate: entry(
    'PUBLIC_URL_TEMPLATE',
    "a server's public address; {subdomain} is replaced, and {port} by PORT",
    z
      .string()
      .refine((v) => v.includes('{subdomain}'), 'must contain {subdomain}')
      .refine(
        (v) => URL.canParse(v.replaceAll('{subdomain}', 'x').replaceAll('{port}', '1')),
        'must be an absolute URL',
      )
      .transform((v) => v.replace(/\/+$/, '')),
    'http://{subdomain}.localhost:{port}',
  ),
  routing: entry(
    'ROUTING',
    'the addresses every hosted server answers at, comma-separated: host ({subdomain}.{BASE_DOMAIN}, picked by the Host header) and path ({PUBLIC_URL}/servers/{subdomain}/mcp on PORT: no DNS needed); docs/addresses.md',
    addressForms,
    'host,path',
  ),
  publicUrl: entry(
    'PUBLIC_URL',
    "the PORT listener's own public address, the base of path addresses ({PUBLIC_URL}/servers/{subdomain}/mcp) and their OAuth resource: an http(s) origin, with a path prefix when a reverse proxy serves mcphost under one; {port} is replaced by PORT",
    publicListenerAddress,
    'http://localhost:{port}',
  ),
  dataDir: entry(
    'DATA_DIR',
    'embedded store, generated keys, built assets',
    z.string().min(1),
    './data',
  ),
  databaseUrl: entry(
    'DATABASE_URL',
    'PostgreSQL URL instead of the embedded SQLite store',
    z.string().url().optional(),
  ),
  adminToken: entry(
    'ADMIN_TOKEN',
    'admin bearer token; unset = generated at first start and printed once',
    z.string().min(16, 'must be at least 16 characters').optional(),
  ),
  masterKey: entry(
    'MASTER_KEY',
    'key encrypting secrets at rest (32 bytes, base64 or hex); unset = generated into DATA_DIR',
    z.string().optional(),
  ),
  egressAllow: entry(
    'EGRESS_ALLOW',
    'comma-separated addresses/CIDRs/hosts (each with an optional :port) that tool egress may reach besides globally reachable addresses',
    csv,
    '',
  ),
  trustedProxies: entry(
    'TRUSTED_PROXIES',
    'comma-separated addresses/CIDRs of reverse proxies whose X-Forwarded-For names the client (logs, the invocation log, per-client limits); empty = the socket peer is the client',
    csv.refine(
      (entries) =>
        // node:net's isIP is strict: no "10" or "0x0a.0.0.1", which ipaddr.js would take.
        entries.every(
          (entry) =>
            isIP(entry.split('/')[0]!) !== 0 && (!entry.includes('/') || ipaddr.isValidCIDR(entry)),
        ),
      'each entry is an IP address or a CIDR range, e.g. 10.0.0.0/8',
    ),
    '',
  ),
  oauthAllowInsecureLoopback: entry(
    'OAUTH_ALLOW_INSECURE_LOOPBACK',
    'accept http://127.0.0.1… authorization servers (development only)',
    bool,
    'false',
  ),
  oauthClockToleranceSec: entry(
    'OAUTH_CLOCK_TOLERANCE_SEC',
    'leeway for exp/nbf of access tokens, in seconds',
    nonNegativeInt,
    '30',
  ),
  oauthJwksCooldownMs: entry(
    'OAUTH_JWKS_COOLDOWN_MS',
    'least time between key refetches caused by an unknown kid, in ms',
    nonNegativeInt,
    '30000',
  ),
  metricsToken: entry(
    'METRICS_TOKEN',
    'bearer token that may read GET /metrics (besides the admin token); unset = admin token only',
    z.string().min(16, 'must be at least 16 characters').optional(),
  ),
  adminCookieSecure: entry(
    'ADMIN_COOKIE_SECURE',
    'dashboard session cookie Secure (and __Host- named): auto = unless the request came over plain HTTP to a loopback host; true; false (plain HTTP beyond localhost, not recommended)',
    z.enum(['auto', 'true', 'false']),
    'auto',
  ),
  adminSessionIdleMinutes: entry(
    'ADMIN_SESSION_IDLE_MINUTES',
    'a dashboard session ends after this many minutes unused',
    positiveInt,
    '60',
  ),
  adminSessionMaxHours: entry(
    'ADMIN_SESSION_MAX_HOURS',
    'a dashboard session ends this many hours after sign-in, used or not',
    positiveInt,
    '12',
  ),
  signInAttemptsPerMinute: entry(
    'SIGN_IN_ATTEMPTS_PER_MINUTE',
    "dashboard sign-in attempts (password or single sign-on) one client network — an IPv4 address, an IPv6 /64 — may make per minute, per replica; as many wrong admin bearers (admin, personal or metrics token), counted apart; past either, 429 for that network's sign-ins or bearers, right ones included",
    positiveInt,
    '10',
  ),
  adminOidcIssuer: entry(
    'ADMIN_OIDC_ISSUER',
    'OpenID Connect issuer URL for dashboard sign-in; unset = no single sign-on',
    z.string().url().optional(),
  ),
  adminOidcClientId: entry(
    'ADMIN_OIDC_CLIENT_ID',
    "the dashboard's client id at ADMIN_OIDC_ISSUER (required with it)",
    z.string().min(1).max(512).optional(),
  ),
  adminOidcClientSecret: entry(
    'ADMIN_OIDC_CLIENT_SECRET',
    'its client secret; unset = a public client (PKCE alone)',
    z.string().min(1).optional(),
  ),
  adminOidcRedirectUrl: entry(
    'ADMIN_OIDC_REDIRECT_URL',
    "the admin side's callback as registered at the provider, e.g. https://admin.example.com/auth/oidc/callback (required with ADMIN_OIDC_ISSUER)",
    z
      .string()
      .url()
      .refine((url) => new URL(url).pathname === '/auth/oidc/callback', {
        message: 'the path must be /auth/oidc/callback',
      })
      .optional(),
  ),
  adminOidcLabel: entry(
    'ADMIN_OIDC_LABEL',
    'what the sign-in button calls the provider',
    z.string().min(1).max(64),
    'single sign-on',
  ),
  auditRetentionDays: entry(
    'AUDIT_RETENTION_DAYS',
    'days audit entries are kept; 0 = forever',
    nonNegativeInt,
    '365',
  ),
  shutdownGraceMs: entry(
    'SHUTDOWN_GRACE_MS',
    'on SIGTERM, how long running invocations may finish before containers are retired, in ms',
    nonNegativeInt,
    '10000',
  ),
  logLevel: entry(
    'LOG_LEVEL',
    'fatal, error, warn, info, debug or trace',
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    'info',
  ),
  // A person at a terminal reads lines; a log collector reads JSON.
  logFormat: entry(
    'LOG_FORMAT',
    'auto (readable lines on a terminal, JSON otherwise), json or pretty',
    z.enum(['auto', 'json', 'pretty']),
    'auto',
  ),

  sandboxDriver: entry(
    'SANDBOX_DRIVER',
    "'docker', or 'process' (development only: no isolation)",
    z.enum(['docker', 'process']),
    'docker',
  ),
  runnerImage: entry(
    'RUNNER_IMAGE',
    'runner image tag to use as is; unset = built from Dockerfile.runner when missing',
    z.string().min(1).optional(),
  ),
  runnerBase: entry(
    'RUNNER_BASE',
    "'auto' (NODE image if present or pullable, else local), 'registry', or 'local' (host node, FROM scratch); MCPHOST_RUNNER_BASE, its former name, is still read",
    z.enum(['auto', 'registry', 'local']),
    'auto',
    'MCPHOST_RUNNER_BASE',
  ),
  runnerSocketDir: entry(
    'RUNNER_SOCKET_DIR',
    "where runner containers' protocol travels: 'auto' (a Unix socket per runc container in DATA_DIR/run, bind-mounted read-only into it, when this control plane runs on the engine's own host with the one engine of DOCKER_HOST and a probe container at start shows it works; else the engine's attach stream), 'off' (always the attach stream), or a directory on the engine's host for the sockets (the start fails when the probe does). The socket path halves the round trip and takes dockerd off every call; runsc containers keep the attach stream",
    z.union([
      z.enum(['auto', 'off']),
      z
        .string()
        .refine((value) => value.startsWith('/'), "must be 'auto', 'off' or an absolute path")
        .refine(
          (value) => Buffer.byteLength(value) <= MAX_SOCKET_ROOT_BYTES,
          `must be at most ${MAX_SOCKET_ROOT_BYTES} bytes long: Unix socket paths under it must fit in 107 bytes`,
        ),
    ]),
    'auto',
  ),
  runnerStartupTimeoutMs: entry(
    'RUNNER_STARTUP_TIMEOUT_MS',
    'how long a new container may take to say it is ready before its start counts as failed, in ms',
    positiveInt,
    '15000',
  ),
  planeName: entry(
    'PLANE_NAME',
    "label scope of this control plane's runner containers; unset = its container's compose project, else 'mcphost'. At start it reaps the scope's leftovers of control planes that no longer run, and warns about those of one still running",
    z
      .string()
      .regex(/^[a-z0-9][a-z0-9_.-]{0,62}$/)
      .optional(),
  ),

  poolMinWarm: entry(
    'POOL_MIN_WARM',
    'containers a pool keeps (idle or busy) once it has been called; 0 = scale to zero when idle',
    nonNegativeInt,
    '1',
  ),
  poolMaxSize: entry(
    'POOL_MAX_SIZE',
    "containers at most per pool (a server's, or a tool's own)",
    positiveInt,
    '4',
  ),
  poolMaxSizeCap: entry(
    'POOL_MAX_SIZE_CAP',
    'largest maxSize an admin may set for one pool',
    positiveInt,
    '32',
  ),
  poolMaxTotal: entry(
    'POOL_MAX_TOTAL',
    'containers at most across all pools (it bounds what each costs besides memory: CPU share, pids, sockets); unset = floor(POOL_MAX_MEMORY_MB ÷ TOOL_MEMORY_MB), at least 4',
    positiveInt.optional(),
  ),
  poolMaxMemoryMb: entry(
    'POOL_MAX_MEMORY_MB',
    "most memory the containers' limits may add up to across all pools, in MiB (each server holds at most POOL_SERVER_SHARE of it); unset = POOL_MEMORY_SHARE × this machine's memory, at least 4 × TOOL_MEMORY_MB (set it when the Docker engine is remote)",
    positiveInt.optional(),
  ),
  poolMemoryShare: entry(
    'POOL_MEMORY_SHARE',
    "share of this machine's memory that containers' memory limits may add up to when POOL_MAX_MEMORY_MB is unset",
    z.coerce.number().positive().max(4),
    '0.75',
  ),
  poolServerShare: entry(
    'POOL_SERVER_SHARE',
    "largest share of the budget (POOL_MAX_TOTAL containers, POOL_MAX_MEMORY_MB of memory) one server may hold, unless an admin sets the server's maxContainers",
    z.coerce.number().positive().max(1),
    '0.5',
  ),
  poolStartConcurrency: entry(
    'POOL_START_CONCURRENCY',
    "container starts in flight at once (the rest queue, callers' before refills, servers taking turns; one server runs at most POOL_SERVER_SHARE of them); unset = this machine's CPUs ÷ TOOL_CPUS (a container boots within its own CPU quota)",
    positiveInt.optional(),
  ),
  poolMaxInvocations: entry(
    'POOL_MAX_INVOCATIONS_PER_CONTAINER',
    'invocations before a container is retired: a safety net (see docs/decisions.md)',
    positiveInt,
    '100000',
  ),
  poolHeapRetireShare: entry(
    'POOL_HEAP_RETIRE_SHARE',
    'a container whose V8 heap stays above this share of its limit after 3 invocations in a row is retired',
    z.coerce.number().positive().max(1),
    '0.5',
  ),
  poolIdleTtlMs: entry(
    'POOL_IDLE_TTL_MS',
    'idle time before a container above minWarm is retired, in ms',
    positiveInt,
    '300000',
  ),
  poolQueueTimeoutMs: entry(
    'POOL_QUEUE_TIMEOUT_MS',
    'longest wait for a free container before "no capacity", in ms',
    nonNegativeInt,
    '10000',
  ),
  poolMaxQueue: entry(
    'POOL_MAX_QUEUE',
    'callers waiting per pool before "no capacity" at once',
    nonNegativeInt,
    '256',
  ),
  genericPoolSize: entry(
    'GENERIC_POOL_SIZE',
    'most unbound warm containers (one kept, more while pools miss: misses in the last minute); 0 = none',
    nonNegativeInt,
    '4',
  ),

  toolTimeoutGraceMs: entry(
    'TOOL_TIMEOUT_GRACE_MS',
    "time past an invocation's time limit before its container is killed (the harness reports the timeout itself first), in ms",
    nonNegativeInt,
    '500',
  ),
  toolMaxConcurrentCalls: entry(
    'TOOL_MAX_CONCURRENT_CALLS',
    'sdk.http / sdk.db calls one invocation may have in flight; more fail with ERR_TOO_MANY_CALLS (each holds a socket or a database session)',
    positiveInt,
    '32',
  ),
  toolTimeoutMs: entry(
    'TOOL_TIMEOUT_MS',
    'default time limit of one invocation, in ms',
    positiveInt,
    '30000',
  ),
  toolMemoryMb: entry(
    'TOOL_MEMORY_MB',
    'default memory limit of a container, in MiB',
    z.coerce.number().int().min(32),
    '128',
  ),
  toolMaxMemoryMb: entry(
    'TOOL_MAX_MEMORY_MB',
    "largest memory limit a server's or a tool's limits may set, in MiB (a save above it is refused); unset = what one server may hold (POOL_SERVER_SHARE of the memory budget), at most 65536",
    z.coerce.number().int().min(32).max(65_536).optional(),
  ),
  toolMaxTimeoutMs: entry(
    'TOOL_MAX_TIMEOUT_MS',
    "longest time limit a server's or a tool's limits may set, in ms (a save above it is refused)",
    z.coerce.number().int().positive().max(3_600_000),
    '600000',
  ),
  toolCpus: entry(
    'TOOL_CPUS',
    'default CPU share of a container, in cores',
    z.coerce.number().positive().max(64),
    '0.5',
  ),
  toolPids: entry(
    'TOOL_PIDS',
    'default process/thread limit of a container',
    z.coerce.number().int().min(8),
    '64',
  ),
  toolSchemaCheckTimeoutMs: entry(
    'TOOL_SCHEMA_CHECK_TIMEOUT_MS',
    "longest check of a call's arguments or result against the tool's inputSchema/outputSchema (compiling it included), in ms; past it the call fails and the checking thread is replaced",
    positiveInt,
    '250',
  ),
  toolMaxResultBytes: entry(
    'TOOL_MAX_RESULT_BYTES',
    "largest serialised tool result, in bytes; also the largest static resource's contents and rendered prompt template",
    positiveInt,
    String(1024 * 1024),
  ),
  toolMaxLogBytes: entry(
    'TOOL_MAX_LOG_BYTES',
    'largest total console output of one invocation, in bytes; each line counts at least 64 bytes',
    positiveInt,
    String(256 * 1024),
  ),
  toolMaxLogEntries: entry(
    'TOOL_MAX_LOG_ENTRIES',
    'largest number of console lines kept of one invocation; later lines are dropped with a notice',
    positiveInt,
    '1000',
  ),

  httpEgressTimeoutMs: entry(
    'HTTP_EGRESS_TIMEOUT_MS',
    'connect + total time limit of one sdk.http request, in ms',
    positiveInt,
    '10000',
  ),
  httpEgressMaxBytes: entry(
    'HTTP_EGRESS_MAX_BYTES',
    'largest sdk.http response body, in bytes',
    positiveInt,
    String(10 * 1024 * 1024),
  ),
  httpEgressMaxRedirects: entry(
    'HTTP_EGRESS_MAX_REDIRECTS',
    'redirects sdk.http follows at most',
    nonNegativeInt,
    '5',
  ),
  httpEgressConnectionsPerServer: entry(
    'HTTP_EGRESS_CONNECTIONS_PER_SERVER',
    "connections one server's sdk.http calls may hold open to one origin (each server has its own)",
    positiveInt,
    '16',
  ),
  httpEgressAgentIdleMs: entry(
    'HTTP_EGRESS_AGENT_IDLE_MS',
    "a server's sdk.http connections with nothing in flight are closed after this long, in ms",
    positiveInt,
    '60000',
  ),
  dbConnectTimeoutMs: entry(
    'DB_CONNECT_TIMEOUT_MS',
    'resolve + connect + authenticate of one sdk.db connection, in ms',
    positiveInt,
    '10000',
  ),
  dbStatementTimeoutMs: entry(
    'DB_STATEMENT_TIMEOUT_MS',
    'time limit of one sdk.db statement, in ms',
    positiveInt,
    '30000',
  ),
  dbPoolMaxPerKey: entry(
    'DB_POOL_MAX_PER_KEY',
    'connections at most per database target',
    positiveInt,
    '5',
  ),
  dbPoolMaxTotal: entry(
    'DB_POOL_MAX_TOTAL',
    'database connections at most overall',
    positiveInt,
    '50',
  ),
  dbPoolIdleMs: entry(
    'DB_POOL_IDLE_MS',
    'idle time before a database connection is closed, in ms',
    positiveInt,
    '30000',
  ),

  invocationRetention: entry(
    'INVOCATION_RETENTION',
    "invocation log rows kept in all; past it the oldest rows beyond each server's own floor (INVOCATION_RETENTION_PER_SERVER) are pruned, the servers holding the most first",
    positiveInt,
    '10000',
  ),
  invocationRetentionPerServer: entry(
    'INVOCATION_RETENTION_PER_SERVER',
    'newest invocation log rows each server keeps whatever other servers log (0 = no floor)',
    nonNegativeInt,
    '1000',
  ),
  invocationRefusalBucketSeconds: entry(
    'INVOCATION_REFUSAL_BUCKET_SECONDS',
    'calls refused before any code ran (arguments, unknown tool, origin, credentials, rate, no container) are counted per server, error code and bucket of this many seconds instead of logged one row each',
    positiveInt,
    '60',
  ),
  invocationRefusalRetentionHours: entry(
    'INVOCATION_REFUSAL_RETENTION_HOURS',
    'hours refusal counts are kept',
    positiveInt,
    '24',
  ),
  invocationRowMaxBytes: entry(
    'INVOCATION_ROW_MAX_BYTES',
    'largest error message plus log lines stored for one invocation, in bytes; the rest is cut with a notice',
    z.coerce.number().int().min(1024),
    String(512 * 1024),
  ),
  invocationPageMaxBytes: entry(
    'INVOCATION_PAGE_MAX_BYTES',
    'largest total of log lines in one GET /api/invocations answer, in bytes; later rows carry a notice instead',
    z.coerce.number().int().min(1024),
    String(4 * 1024 * 1024),
  ),
  serverEntriesMaxBytes: entry(
    'SERVER_ENTRIES_MAX_BYTES',
    "largest total of one server's tools, prompts and resources as stored (code, schemas and static contents included), in bytes; every replica keeps them in memory. A save past it is refused; one that does not grow the server passes",
    nonNegativeInt,
    String(16 * 1024 * 1024),
  ),
  versionsKept: entry(
    'VERSIONS_KEPT',
    'versions kept of each tool, prompt and resource, the current one included; older ones are pruned when it is next saved',
    positiveInt,
    '20',
  ),
  versionsMaxBytes: entry(
    'VERSIONS_MAX_BYTES',
    "largest total of one tool's, prompt's or resource's kept versions, in bytes; the oldest go first, the current one is always kept",
    positiveInt,
    String(4 * 1024 * 1024),
  ),
  serverVersionsMaxBytes: entry(
    'SERVER_VERSIONS_MAX_BYTES',
    "largest total of every kept version of one server's tools, prompts and resources, in bytes; past it the server's oldest versions go (never a current one)",
    positiveInt,
    String(64 * 1024 * 1024),
  ),
  dockerEngines: entry(
    'DOCKER_ENGINES',
    'several Docker engines for runner containers, comma-separated: unix:///path/docker.sock, or tcp://host:2376?certs=/dir (ca.pem, cert.pem, key.pem; TLS is required); new containers go where most memory is free. Unset = the one engine of DOCKER_HOST',
    csv
      .transform((entries, context) => {
        const addresses: EngineAddress[] = [];
        for (const entry of entries) {
          const parsed = parseEngineAddress(entry);
          if (typeof parsed === 'string') context.addIssue({ code: 'custom', message: parsed });
          else addresses.push(parsed);
        }
        const seen = new Set<string>();
        for (const { name } of addresses) {
          if (seen.has(name)) {
            context.addIssue({ code: 'custom', message: `${name} is listed twice` });
          }
          seen.add(name);
        }
        if (entries.length === 0) {
          context.addIssue({ code: 'custom', message: 'names no engine (leave it unset for one)' });
        }
        return addresses;
      })
      .optional(),
  ),
  dockerEngineCheckIntervalMs: entry(
    'DOCKER_ENGINE_CHECK_INTERVAL_MS',
    'with DOCKER_ENGINES, how often each engine is checked (one that stopped answering is passed over until it answers again), in ms',
    z.coerce.number().int().min(100),
    '5000',
  ),
  sandboxReapIntervalMs: entry(
    'SANDBOX_REAP_INTERVAL_MS',
    'how often runner containers that stopped without the control plane (killed from outside, an engine restart) are removed, in ms',
    z.coerce.number().int().min(1000),
    '30000',
  ),
  maxBodyBytes: entry(
    'MAX_BODY_BYTES',
    'largest HTTP request body, in bytes',
    positiveInt,
    String(4 * 1024 * 1024),
  ),
  mcpSessionIdleMs: entry(
    'MCP_SESSION_IDLE_MS',
    'an MCP session unused this long is closed, in ms',
    positiveInt,
    String(30 * 60 * 1000),
  ),
  mcpMaxSessions: entry(
    'MCP_MAX_SESSIONS',
    'open MCP sessions at most over all servers; past it a new session replaces an idle one of its own server, else is refused (503)',
    positiveInt,
    '10000',
  ),
  mcpMaxSessionsPerServer: entry(
    'MCP_MAX_SESSIONS_PER_SERVER',
    "open MCP sessions at most on one hosted server; past it a new session replaces an idle one of that server (the same caller's first), else is refused (429)",
    positiveInt,
    '1000',
  ),
  mcpMaxSessionsPerCaller: entry(
    'MCP_MAX_SESSIONS_PER_CALLER',
    "open MCP sessions at most of one caller (OAuth subject, or client IP) on one server; past it a new session replaces the caller's own idle one, else is refused (429)",
    positiveInt,
    '50',
  ),
  mcpSseRetryMs: entry(
    'MCP_SSE_RETRY_MS',
    'the `retry` a resumable response stream announces: how long a client waits before resuming it with Last-Event-ID, in ms',
    positiveInt,
    '1000',
  ),
  mcpResumeWindowMs: entry(
    'MCP_RESUME_WINDOW_MS',
    'how long the rest of a call whose response was cut (or ended by sdk.closeStream) stays resumable after its answer, in ms',
    positiveInt,
    '60000',
  ),
  mcpResumeMaxBytesPerCaller: entry(
    'MCP_RESUME_MAX_BYTES_PER_CALLER',
    "bytes of cut response streams one caller may have kept for resuming on one server (memory and the PostgreSQL archive; replicas keep an equal share each); past it the caller's oldest cut streams are dropped and their calls cancelled; 0 = none kept",
    nonNegativeInt,
    String(16 * 1024 * 1024),
  ),
  mcpResumeMaxBytesPerServer: entry(
    'MCP_RESUME_MAX_BYTES_PER_SERVER',
    "bytes of cut response streams kept for resuming on one server, over all its callers; past it the oldest go, the newcomer's caller's own first",
    nonNegativeInt,
    String(64 * 1024 * 1024),
  ),
  mcpResumeMaxBytes: entry(
    'MCP_RESUME_MAX_BYTES',
    'bytes of cut response streams kept for resuming over all servers; past it the oldest of the server keeping the most go',
    nonNegativeInt,
    String(256 * 1024 * 1024),
  ),
  mcpCacheTtlMs: entry(
    'MCP_CACHE_TTL_MS',
    'the `ttlMs` a modern-era (2026-07-28) client is told it may cache lists, resource reads and server/discover for, for servers without their own cacheTtlMs, in ms',
    nonNegativeInt,
    '30000',
  ),
  mcpMaxParkedPerCaller: entry(
    'MCP_MAX_PARKED_PER_CALLER',
    'modern-era calls one caller may have waiting for its input (input_required) on one server, per replica; each holds a running invocation and its container until answered or timed out',
    positiveInt,
    '16',
  ),
  mcpMaxParkedPerServer: entry(
    'MCP_MAX_PARKED_PER_SERVER',
    'modern-era calls waiting for client input on one server, over all its callers, per replica',
    positiveInt,
    '64',
  ),
  mcpMaxListenPerCaller: entry(
    'MCP_MAX_LISTEN_PER_CALLER',
    'subscriptions/listen streams one caller may hold open on one server, per replica',
    positiveInt,
    '8',
  ),
  mcpMaxListenPerServer: entry(
    'MCP_MAX_LISTEN_PER_SERVER',
    'subscriptions/listen streams open on one server, over all its callers, per replica',
    positiveInt,
    '256',
  ),
  rateLimitPerMinute: entry(
    'RATE_LIMIT_PER_MINUTE',
    "requests a minute one caller may make to one server's /mcp, for servers without their own rateLimit; 0 = no default limit",
    nonNegativeInt,
    '600',
  ),
  rateLimitBurst: entry(
    'RATE_LIMIT_BURST',
    'requests one caller may make at once before RATE_LIMIT_PER_MINUTE applies',
    positiveInt,
    '60',
  ),
  mcpAuthFailuresPerMinute: entry(
    'MCP_AUTH_FAILURES_PER_MINUTE',
    "failed authentications (a wrong, revoked or expired API key or access token) one client network — an IPv4 address, an IPv6 /64 — may cause per minute at one hosted server's /mcp, per replica; past it, that network's requests to that server are refused 429 before any credential is checked, right ones included (other servers are not: tenants behind one NAT share a network); 0 = no brake at all, MCP_AUTH_FAILURES_PER_NETWORK_PER_MINUTE included",
    nonNegativeInt,
    '60',
  ),
  mcpAuthFailuresPerNetworkPerMinute: entry(
    'MCP_AUTH_FAILURES_PER_NETWORK_PER_MINUTE',
    "failed authentications one client network may cause per minute over all hosted servers, per replica: a ceiling far above MCP_AUTH_FAILURES_PER_MINUTE that brakes a flood spread over many servers; past it, that network's requests to every server in OAuth or API-key mode are refused 429 before any credential is checked; 0 = no ceiling",
    nonNegativeInt,
    '600',
  ),
} as const;

type Table = typeof CONFIG_TABLE;
export type Config = Readonly<{ [K in keyof Table]: Table[K] extends Entry<infer T> ? T : never }>;

/** Where a variable is looked up, in order: the first source that has it wins. */
type Source = Readonly<Record<string, string | undefined>>;

/** One entry's value from `sources`, or the problem naming the variable that gave it. */
function parseEntry(
  item: Entry<unknown>,
  sources: readonly Source[],
): { ok: true; value: unknown } | { ok: false; problem: string } {
  // The first source that names the variable decides; an empty value there means unset.
  const lookup = (name: string) => {
    const raw = sources.map((source) => source[name]).find((value) => value !== undefined);
    return raw === '' ? undefined : raw;
  };
  const direct = lookup(item.env);
  const fromFile = SECRET_VARIABLES.has(item.env) ? secretFromFile(item.env, lookup) : undefined;
  if (fromFile !== undefined && !fromFile.ok) return fromFile;
  if (fromFile !== undefined && direct !== undefined) {
    return {
      ok: false,
      problem: `${item.env} and ${item.env}${FILE_SUFFIX} are both set: keep one`,
    };
  }
  const current = direct ?? fromFile?.value;
  const former = current === undefined && item.formerEnv ? lookup(item.formerEnv) : undefined;
  const name =
    former !== undefined
      ? item.formerEnv!
      : fromFile !== undefined
        ? `${item.env}${FILE_SUFFIX}`
        : item.env;
  const given = current ?? former ?? item.default;
  const parsed = item.schema.safeParse(given);
  if (parsed.success) return { ok: true, value: parsed.data };
  // Never echo a value that may be a credential (tokens, keys, URLs with passwords).
  const shown = SECRET_VARIABLES.has(item.env) ? '(value hidden)' : JSON.stringify(given);
  return {
    ok: false,
    problem: `${name}=${shown}: ${describeProblems(parsed.error)}`,
  };
}

/**
 * The value of `NAME_FILE` for a secret variable: the file's text without its
 * trailing line break (what `echo … > file` adds). Undefined when unset.
 */
function secretFromFile(
  env: string,
  lookup: (name: string) => string | undefined,
): { ok: true; value: string } | { ok: false; problem: string } | undefined {
  const variable = `${env}${FILE_SUFFIX}`;
  const path = lookup(variable);
  if (path === undefined) return undefined;
  let fd: number | undefined;
  try {
    // A regular file only, read to a bound: /dev/zero, a FIFO or a /proc file
    // report size 0 and would read forever or block the start.
    // Non-blocking: opening a FIFO for reading would wait for a writer.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    if (!fstatSync(fd).isFile()) {
      return { ok: false, problem: `${variable}=${JSON.stringify(path)}: not a regular file` };
    }
    const buffer = Buffer.alloc(SECRET_FILE_MAX_BYTES + 1);
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    if (length > SECRET_FILE_MAX_BYTES) {
      return { ok: false, problem: `${variable}=${JSON.stringify(path)}: file larger than 64 KiB` };
    }
    const value = buffer
      .subarray(0, length)
      .toString('utf8')
      .replace(/\r?\n$/, '');
    if (value === '') {
      return { ok: false, problem: `${variable}=${JSON.stringify(path)}: file is empty` };
    }
    return { ok: true, value };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    return { ok: false, problem: `${variable}=${JSON.stringify(path)}: cannot read it (${code})` };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function configError(problems: string[]): McphostError {
  return new McphostError('ERR_CONFIG', `invalid configuration: ${problems.join('; ')}`, {
    details: problems,
  });
}

/** Every entry parsed from `sources`; throws ERR_CONFIG naming every bad variable. */
function parseConfig(sources: readonly Source[]): Config {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, item] of Object.entries(CONFIG_TABLE) as [string, Entry<unknown>][]) {
    const parsed = parseEntry(item, sources);
    if (parsed.ok) values[key] = parsed.value;
    else problems.push(parsed.problem);
  }
  if (problems.length === 0) problems.push(...settingsConflicts(values as Config));
  if (problems.length > 0) throw configError(problems);
  return Object.freeze(values) as Config;
}

/** What several settings get wrong together (each one valid alone). */
function settingsConflicts(config: Config): string[] {
  const problems: string[] = [];
  // With both forms on, a PUBLIC_URL host that is a server's name would be that
  // server's (the host form decides first): every path address would stop
  // answering, and the tenant who takes the name would hold the front door.
  const host = parseListenerUrl(config.publicUrl, config.port).hostname;
  const label = host.endsWith(`.${config.baseDomain}`)
    ? host.slice(0, -config.baseDomain.length - 1)
    : undefined;
  if (config.routing.host && config.routing.path && label !== undefined && !label.includes('.')) {
    problems.push(
      `PUBLIC_URL=${config.publicUrl}: its host ${host} is a server's name under BASE_DOMAIN=${config.baseDomain}; use BASE_DOMAIN's own name or another host`,
    );
  }
  return problems;
}

/**
 * The hosts path addresses answer on: PUBLIC_URL's, and when that is a name of
 * this machine, every name of it (a client may say localhost, 127.0.0.1 or
 * [::1] for the same listener). On any other Host a path is no server's, so a
 * proxy's rules per server name cannot be walked around by a path.
 */
export function publicPathHosts(config: Pick<Config, 'publicUrl' | 'port'>): string[] {
  const host = parseListenerUrl(config.publicUrl, config.port).hostname;
  return LOOPBACK_NAMES.includes(host) ? [...LOOPBACK_NAMES] : [host];
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/**
 * The settings file of a process started from a checkout: `MCPHOST_ENV_FILE`,
 * else `mcphost.env` in the working directory. Never `.env`: that is
 * compose's file (it reads it to fill compose.yaml, and passes it to the
 * container), and a production `PUBLIC_URL_TEMPLATE` in it must not reach an
 * `npm start` on the same checkout.
 */
export function settingsFileOf(env: NodeJS.ProcessEnv = process.env): string {
  return env.MCPHOST_ENV_FILE || 'mcphost.env';
}

/**
 * Reads the configuration from `env` (default `process.env`) and, for names
 * not set there, from the settings file (see settingsFileOf). Throws
 * ERR_CONFIG naming every bad variable.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  dotenvPath = settingsFileOf(env),
): Config {
  if (env.MCPHOST_ENV_FILE && !existsSync(dotenvPath)) {
    throw configError([`MCPHOST_ENV_FILE=${JSON.stringify(dotenvPath)}: no such file`]);
  }
  const fromFile = existsSync(dotenvPath) ? parseEnv(readFileSync(dotenvPath, 'utf8')) : {};
  return parseConfig([env, fromFile]);
}

/** The configuration with nothing set: every value is the table's default. */
export function defaultConfig(): Config {
  return parseConfig([]);
}

/**
 * One setting read from `env` (default `process.env`) alone, for scripts that
 * need a single value without the whole service's configuration. Throws
 * ERR_CONFIG naming the variable when its value is bad.
 */
export function readSetting<K extends keyof Config>(key: K, env: Source = process.env): Config[K] {
  const parsed = parseEntry(CONFIG_TABLE[key] as Entry<unknown>, [env]);
  if (!parsed.ok) throw configError([parsed.problem]);
  return parsed.value as Config[K];
}

/**
 * The public address of a hosted server, from PUBLIC_URL_TEMPLATE: `{port}`
 * is PORT, so the default follows the port the service listens on.
 */
export function serverAddress(
  config: Pick<Config, 'publicUrlTemplate' | 'port'>,
  subdomain: string,
): string {
  return config.publicUrlTemplate
    .replaceAll('{subdomain}', subdomain)
    .replaceAll('{port}', String(config.port));
}

/** What the address helpers read of the configuration. */
export type AddressConfig = Pick<
  Config,
  'publicUrlTemplate' | 'publicUrl' | 'port' | 'routing' | 'baseDomain'
>;

/**
 * PUBLIC_URL with `{port}` replaced, normalised, without a trailing slash:
 * e.g. `http://localhost:8080`, `https://mcp.example.com/mcphost`.
 */
export function publicListenerUrl(config: Pick<Config, 'publicUrl' | 'port'>): string {
  const url = parseListenerUrl(config.publicUrl, config.port);
  return `${url.origin}${publicPathPrefix(config)}`;
}

/** PUBLIC_URL's path prefix: '' or e.g. `/mcphost` (no trailing slash). */
export function publicPathPrefix(config: Pick<Config, 'publicUrl' | 'port'>): string {
  return parseListenerUrl(config.publicUrl, config.port).pathname.replace(/\/+$/, '');
}

/** The MCP URL of a hosted server at each address form ROUTING turns on. */
export type McpUrls = Readonly<Partial<Record<AddressForm, string>>>;

/**
 * Every MCP URL a hosted server answers at: `host` =
 * `{serverAddress}/mcp`, `path` = `{PUBLIC_URL}/servers/{subdomain}/mcp`;
 * a form ROUTING turns off is absent. The banner and the admin API's server
 * views both read it.
 */
export function serverMcpUrls(config: AddressConfig, subdomain: string): McpUrls {
  return {
    ...(config.routing.host ? { host: `${serverAddress(config, subdomain)}/mcp` } : {}),
    ...(config.routing.path
      ? { path: `${publicListenerUrl(config)}/servers/${subdomain}/mcp` }
      : {}),
  };
}

/**
 * The address form to show first: the only one on; with both, `path` when
 * BASE_DOMAIN is `localhost` (Node, Python and many MCP clients do not resolve
 * `*.localhost`, while `localhost` itself always resolves), else `host`.
 */
export function preferredAddressForm(config: AddressConfig): AddressForm {
  if (!config.routing.host) return 'path';
  if (!config.routing.path) return 'host';
  return config.baseDomain === 'localhost' ? 'path' : 'host';
}

/** The MCP URL to show first (banner, `mcpUrl` of the server views): see preferredAddressForm. */
export function preferredMcpUrl(config: AddressConfig, subdomain: string): string {
  return serverMcpUrls(config, subdomain)[preferredAddressForm(config)]!;
}
