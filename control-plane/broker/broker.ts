/**
 * The broker: the only way tool code reaches the network. The warm-pool layer
 * hands it each `call` message as `handle(op, args, {signal})` and sends back
 * the value, or the McphostError's code and message, as the `reply`. Egress
 * is judged per server (EGRESS_ALLOW plus the server's `egressAllow`), and
 * each server's HTTP traffic has its own connection slots.
 */
import { z } from 'zod';
import { BROKER_OPERATIONS, type BrokerOperation } from '../../src/protocol/index.js';
import { McphostError } from '../errors.js';
import { DatabaseBroker } from './db/database-broker.js';
import { refuseReservedKeys } from './db/reserved-keys.js';
import { EgressPolicy } from './egress/egress-policy.js';
import { systemLookup, type HostLookup } from './egress/checked-resolver.js';
import { performHttpRequest, type HttpLimits } from './http/http-client.js';
import { ServerAgents } from './http/server-agents.js';
import { describeProblems } from '../validation-problems.js';

/** What the broker learns about each call besides its arguments (the invoker supplies it). */
export interface BrokerCallContext {
  /** Aborted when the invocation ends (result, fault, timeout or cancellation). */
  signal: AbortSignal;
  /** The server (tenant) whose tool makes the call. */
  server: string;
  /** The invocation making the call. */
  invocation: string;
  /** The server's own egress allow entries, on top of the service-wide policy. */
  egressAllow: readonly string[];
}

/** Limits of sdk.http; all required (the configuration table holds the defaults). */
export interface BrokerHttpOptions {
  /** Resolve + TCP/TLS handshake per connection, in ms; HTTP_EGRESS_TIMEOUT_MS. */
  connectTimeoutMs: number;
  /** Whole sdk.http call including redirects and body, in ms; HTTP_EGRESS_TIMEOUT_MS. */
  totalTimeoutMs: number;
  /** Largest response body, in bytes; HTTP_EGRESS_MAX_BYTES. */
  maxResponseBytes: number;
  /** Redirects followed (each re-checked) before ERR_HTTP_TOO_MANY_REDIRECTS; HTTP_EGRESS_MAX_REDIRECTS. */
  maxRedirects: number;
  /** Connections one server (tenant) may hold open to one origin; HTTP_EGRESS_CONNECTIONS_PER_SERVER. */
  connectionsPerServerOrigin: number;
  /** A server's HTTP agent with nothing in flight closes after this, in ms; HTTP_EGRESS_AGENT_IDLE_MS. */
  agentIdleMs: number;
}

/** Limits of sdk.db; all required (the configuration table holds the defaults). */
export interface BrokerDatabaseOptions {
  /** Connections per set of connection parameters; DB_POOL_MAX_PER_KEY. */
  maxConnectionsPerKey: number;
  /** Connections across all databases; DB_POOL_MAX_TOTAL. */
  maxConnectionsTotal: number;
  /** Idle connections and unused pools close after this, in ms; DB_POOL_IDLE_MS. */
  idleMs: number;
  /** Resolve + connect + authenticate, in ms; DB_CONNECT_TIMEOUT_MS. */
  connectTimeoutMs: number;
  /** One statement, in ms; DB_STATEMENT_TIMEOUT_MS. */
  statementTimeoutMs: number;
}

/** Options of Broker; validated once, at construction. */
export interface BrokerOptions {
  /** Which destinations tool traffic may reach. */
  egress: EgressPolicy;
  http: BrokerHttpOptions;
  db: BrokerDatabaseOptions;
  /** Name resolution for egress checks. Default: the system resolver (dns.lookup, all addresses). */
  lookup?: HostLookup;
}

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();
const LimitsSchema = z.object({
  http: z.object({
    connectTimeoutMs: positiveInt,
    totalTimeoutMs: positiveInt,
    maxResponseBytes: nonNegativeInt,
    maxRedirects: nonNegativeInt,
    connectionsPerServerOrigin: positiveInt,
    agentIdleMs: positiveInt,
  }),
  db: z
    .object({
      maxConnectionsPerKey: positiveInt,
      maxConnectionsTotal: positiveInt,
      idleMs: positiveInt,
      connectTimeoutMs: positiveInt,
      statementTimeoutMs: positiveInt,
    })
    .refine(
      (db) => db.maxConnectionsTotal >= db.maxConnectionsPerKey,
      'maxConnectionsTotal must be ≥ maxConnectionsPerKey',
    ),
});

/** Serves sdk.http and sdk.db for every container of this control plane. */
export class Broker {
  private readonly egress: EgressPolicy;
  private readonly httpLimits: HttpLimits;
  private readonly httpAgents: ServerAgents;
  private readonly databases: DatabaseBroker;
  /** Each server's policy (EGRESS_ALLOW plus its egressAllow), by server and entries. */
  private readonly serverPolicies = new Map<string, EgressPolicy>();

  constructor(options: BrokerOptions) {
    if (!(options.egress instanceof EgressPolicy))
      throw new TypeError('Broker: options.egress must be an EgressPolicy');
    const parsed = LimitsSchema.safeParse({ http: options.http, db: options.db });
    if (!parsed.success)
      throw new TypeError(`Broker: invalid options: ${describeProblems(parsed.error)}`);
    const lookup = options.lookup ?? systemLookup;
    this.egress = options.egress;
    this.httpLimits = parsed.data.http;
    this.httpAgents = new ServerAgents({
      policy: options.egress,
      lookup,
      connectTimeoutMs: parsed.data.http.connectTimeoutMs,
      connectionsPerOrigin: parsed.data.http.connectionsPerServerOrigin,
      idleMs: parsed.data.http.agentIdleMs,
    });
    this.databases = new DatabaseBroker(lookup, parsed.data.db);
  }

  /**
   * Performs one brokered call. `args` is parsed with the op's schema; every
   * failure is a McphostError whose code travels on the wire.
   */
  async handle(op: BrokerOperation, args: unknown, context: BrokerCallContext): Promise<unknown> {
    switch (op) {
      case 'http': {
        const request = parseArgs(op, args);
        // Each server dials through its own agent: its own connection slots and its own policy.
        return this.httpAgents.use(context.server, context.egressAllow, (agent) =>
          performHttpRequest(agent, request, this.httpLimits, context.signal),
        );
      }
      case 'db.select':
        return this.databases.select(parseDbArgs(op, args), context, this.policyFor(context));
      case 'db.insert':
        return this.databases.insert(parseDbArgs(op, args), context, this.policyFor(context));
      case 'db.query':
        return this.databases.query(parseDbArgs(op, args), context, this.policyFor(context));
      default:
        throw new McphostError(
          'ERR_INVALID_ARGUMENT',
          `unknown sdk operation ${JSON.stringify(op)}`,
        );
    }
  }

  /**
   * Ends an invocation for sdk.db: its connections go back to their pools,
   * rolled back and reset (or destroyed). Call once the invocation's calls have
   * ended; resolves when done, never rejects.
   */
  endInvocation(invocation: string): Promise<void> {
    return this.databases.endInvocation(invocation);
  }

  /** Open database connections across all pools, for tests and metrics. */
  openDatabaseConnections(): Promise<number> {
    return this.databases.openConnections();
  }

  /** HTTP agents open (one per server with recent requests), for tests and metrics. */
  openHttpAgents(): number {
    return this.httpAgents.size;
  }

  /** Closes the HTTP agents and every database pool. */
  async close(): Promise<void> {
    await Promise.all([this.httpAgents.close(), this.databases.close()]);
  }

  /**
   * The policy of the calling server: EGRESS_ALLOW plus the server's own
   * egressAllow, its refusals naming that server's setting.
   */
  private policyFor(context: BrokerCallContext): EgressPolicy {
    const key = JSON.stringify([context.server, context.egressAllow]);
    let policy = this.serverPolicies.get(key);
    if (policy === undefined) {
      policy = this.egress.forServer(context.server, context.egressAllow);
      // Bounded: past 1000 servers' settings, dropping the oldest only costs a re-parse.
      if (this.serverPolicies.size >= 1_000) {
        const oldest = this.serverPolicies.keys().next().value;
        if (oldest !== undefined) this.serverPolicies.delete(oldest);
      }
      this.serverPolicies.set(key, policy);
    }
    return policy;
  }
}

function parseArgs<Op extends BrokerOperation>(
  op: Op,
  args: unknown,
): z.output<(typeof BROKER_OPERATIONS)[Op]> {
  const parsed = BROKER_OPERATIONS[op].safeParse(args);
  if (!parsed.success) {
    const api = op === 'http' ? 'sdk.http' : `sdk.db ${op.slice(3)}`;
    throw new McphostError('ERR_INVALID_ARGUMENT', `${api}: ${describeProblems(parsed.error)}`);
  }
  return parsed.data as z.output<(typeof BROKER_OPERATIONS)[Op]>;
}

/** parseArgs for sdk.db, refusing first the keys the schema would silently drop. */
function parseDbArgs<Op extends Exclude<BrokerOperation, 'http'>>(
  op: Op,
  args: unknown,
): z.output<(typeof BROKER_OPERATIONS)[Op]> {
  refuseReservedKeys(op, args);
  return parseArgs(op, args);
}
