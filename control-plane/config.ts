/**
 * The whole configuration of the control plane, as one table: environment
 * name, meaning, default and parser. Read once at boot (environment first,
 * then a `.env` file in the working directory), validated, frozen. A bad value
 * stops the start with a message naming the variable.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { McphostError } from './errors.js';

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

/** Variables whose values are credentials: named in errors, never shown. */
const SECRET_VARIABLES = new Set(['ADMIN_TOKEN', 'METRICS_TOKEN', 'MASTER_KEY', 'DATABASE_URL']);

interface Entry<T> {
  env: string;
  doc: string;
  schema: z.ZodType<T, unknown>;
  /** Raw default, parsed like a configured value; undefined = unset. */
  default?: string;
}

function entry<T>(
  env: string,
  doc: string,
  schema: z.ZodType<T, unknown>,
  fallback?: string,
): Entry<T> {
  return { env, doc, schema, default: fallback };
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
  listenHost: entry('LISTEN_HOST', 'address the listeners bind to', z.string().min(1), '0.0.0.0'),
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
    "a server's public address; {subdomain} is replaced",
    z
      .string()
      .refine((v) => v.includes('{subdomain}'), 'must contain {subdomain}')
      .refine((v) => URL.canParse(v.replace('{subdomain}', 'x')), 'must be an absolute URL')
      .transform((v) => v.replace(/\/+$/, '')),
    'http://{subdomain}.localhost:8080',
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
    'comma-separated CIDRs/hosts tool egress may reach besides public addresses',
    csv,
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
    "'auto' (NODE image if present or pullable, else local), 'registry', or 'local' (host node, FROM scratch)",
    z.enum(['auto', 'registry', 'local']),
    'auto',
  ),
  planeName: entry(
    'PLANE_NAME',
    "label scope of this control plane's containers; leftovers with it are reaped at start, so replicas sharing one Docker engine need distinct names",
    z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,62}$/),
    'mcphost',
  ),

  poolMinWarm: entry(
    'POOL_MIN_WARM',
    'warm containers kept per tool once it has been called',
    nonNegativeInt,
    '1',
  ),
  poolMaxSize: entry('POOL_MAX_SIZE', 'containers at most per tool', positiveInt, '4'),
  poolMaxSizeCap: entry(
    'POOL_MAX_SIZE_CAP',
    'largest maxSize an admin may set for one pool',
    positiveInt,
    '32',
  ),
  poolMaxTotal: entry('POOL_MAX_TOTAL', 'containers at most across all pools', positiveInt, '64'),
  poolMaxInvocations: entry(
    'POOL_MAX_INVOCATIONS_PER_CONTAINER',
    'invocations before a container is retired',
    positiveInt,
    '1000',
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
    'warm containers not yet bound to a tool',
    nonNegativeInt,
    '2',
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
  toolMaxResultBytes: entry(
    'TOOL_MAX_RESULT_BYTES',
    'largest serialised tool result, in bytes',
    positiveInt,
    String(1024 * 1024),
  ),
  toolMaxLogBytes: entry(
    'TOOL_MAX_LOG_BYTES',
    'largest total console output of one invocation, in bytes',
    positiveInt,
    String(256 * 1024),
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
    'invocation log rows kept',
    positiveInt,
    '10000',
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
    'open MCP sessions at most (the least recently used is closed)',
    positiveInt,
    '10000',
  ),
} as const;

type Table = typeof CONFIG_TABLE;
export type Config = Readonly<{ [K in keyof Table]: Table[K] extends Entry<infer T> ? T : never }>;

/**
 * Reads the configuration from `env` (default `process.env`) and, for names
 * not set there, from `<cwd>/.env`. Throws ERR_CONFIG naming every bad variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, dotenvPath = '.env'): Config {
  const fromFile = existsSync(dotenvPath) ? parseEnv(readFileSync(dotenvPath, 'utf8')) : {};
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, item] of Object.entries(CONFIG_TABLE) as [string, Entry<unknown>][]) {
    const raw = env[item.env] ?? fromFile[item.env];
    const given = raw === undefined || raw === '' ? item.default : raw;
    const parsed = item.schema.safeParse(given);
    if (parsed.success) {
      values[key] = parsed.data;
      continue;
    }
    // Never echo a value that may be a credential (tokens, keys, URLs with passwords).
    const shown = SECRET_VARIABLES.has(item.env) ? '(value hidden)' : JSON.stringify(given);
    problems.push(`${item.env}=${shown}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  }
  if (problems.length > 0) {
    throw new McphostError('ERR_CONFIG', `invalid configuration: ${problems.join('; ')}`, {
      details: problems,
    });
  }
  return Object.freeze(values) as Config;
}

/** The public address of a hosted server, from PUBLIC_URL_TEMPLATE. */
export function serverAddress(
  config: Pick<Config, 'publicUrlTemplate'>,
  subdomain: string,
): string {
  return config.publicUrlTemplate.replaceAll('{subdomain}', subdomain);
}
