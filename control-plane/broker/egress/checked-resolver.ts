/**
 * Resolve a host once, check every address against the egress policy, and
 * hand back the address to connect to. Callers connect to that address (not
 * the name), so a DNS answer that changes between check and connect — DNS
 * rebinding — cannot slip past the policy.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { McphostError } from '../../errors.js';
import type { EgressPolicy } from './egress-policy.js';
import { classifyHost, type IpLiteral } from './ip-address.js';

/** Resolves a hostname to all its addresses; injectable so tests can simulate hostile DNS. */
export type HostLookup = (hostname: string) => Promise<IpLiteral[]>;

/** The system resolver (getaddrinfo via dns.lookup, so /etc/hosts applies), all addresses. */
export const systemLookup: HostLookup = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => ({
    family: answer.family === 6 ? 6 : 4,
    address: answer.address,
  }));
};

/** Options of resolveCheckedAddress. */
export interface CheckedResolveOptions {
  policy: EgressPolicy;
  lookup: HostLookup;
  /** The port that will be dialled; allow entries with a port only cover that port. */
  port: number;
  /** Gives up resolving after this many milliseconds (reported with `failureCode`). */
  timeoutMs: number;
  /** Error code used when the name does not resolve. */
  failureCode: 'ERR_HTTP_FAILED' | 'ERR_DB_FAILED';
  /** Error code used when resolving takes longer than `timeoutMs`. */
  timeoutCode: 'ERR_HTTP_TIMEOUT' | 'ERR_DB_FAILED';
  /** What the caller is doing, for messages ("HTTP request", "database connection"). */
  purpose: string;
}

/**
 * The address to connect to for `host`. Every resolved address must pass the
 * policy (a name that resolves to a metadata address among public ones is
 * hostile); the first one is used.
 */
export async function resolveCheckedAddress(
  host: string,
  options: CheckedResolveOptions,
): Promise<IpLiteral> {
  const classified = classifyHost(host);
  if (classified.kind === 'invalid')
    throw new McphostError('ERR_INVALID_ARGUMENT', classified.reason);
  if (classified.kind === 'ip') {
    options.policy.check(host, classified.ip.address, options.port);
    return classified.ip;
  }
  const name = host.trim().replace(/^\[|\]$/g, '');
  const answers = await withTimeout(options.lookup(name), options.timeoutMs).catch(
    (error: unknown) => {
      if (error instanceof TimeoutError) {
        const message = `${options.purpose} to ${name} timed out after ${options.timeoutMs} ms resolving ${name}`;
        throw new McphostError(options.timeoutCode, message);
      }
      const message = `${options.purpose} to ${name} failed: cannot resolve ${name} (${describe(error)})`;
      throw new McphostError(options.failureCode, message, { cause: error });
    },
  );
  if (answers.length === 0) {
    throw new McphostError(
      options.failureCode,
      `${options.purpose} to ${name} failed: ${name} has no address`,
    );
  }
  const checked = answers.map((answer) => {
    const parsed = classifyHost(answer.address);
    if (parsed.kind !== 'ip') {
      throw new McphostError(
        options.failureCode,
        `${options.purpose} to ${name} failed: resolver returned "${answer.address}"`,
      );
    }
    options.policy.check(name, parsed.ip.address, options.port);
    return parsed.ip;
  });
  return checked[0] as IpLiteral;
}

class TimeoutError extends Error {}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError('timeout')), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function describe(error: unknown): string {
  if (error instanceof Error)
    return 'code' in error && typeof error.code === 'string' ? error.code : error.message;
  return String(error);
}
