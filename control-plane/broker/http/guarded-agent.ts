/**
 * An undici Agent whose every new connection goes through the egress policy:
 * the connector resolves the host, checks each address (and the port), and
 * dials the checked address itself (keeping the TLS server name). Checking at
 * connect time, not at request time, means redirects, keep-alive reconnects
 * and DNS answers that change between requests are all judged.
 */
import { Agent, buildConnector } from 'undici';
import type { EgressPolicy } from '../egress/egress-policy.js';
import { resolveCheckedAddress, type HostLookup } from '../egress/checked-resolver.js';
import { classifyHost } from '../egress/ip-address.js';

/** Options of createGuardedAgent. */
export interface GuardedAgentOptions {
  policy: EgressPolicy;
  lookup: HostLookup;
  /** Name resolution plus TCP/TLS handshake limit per connection, in milliseconds. */
  connectTimeoutMs: number;
  /** Connections per origin this agent may hold open at once. */
  connectionsPerOrigin: number;
}

/** A dedicated Agent for brokered traffic; close it with `agent.close()`. */
export function createGuardedAgent(options: GuardedAgentOptions): Agent {
  const dial = buildConnector({ timeout: options.connectTimeoutMs });
  const connect: buildConnector.connector = (connectOptions, callback) => {
    const { hostname, protocol } = connectOptions;
    const port = Number(connectOptions.port) || (protocol === 'https:' ? 443 : 80);
    resolveCheckedAddress(hostname, {
      policy: options.policy,
      lookup: options.lookup,
      port,
      timeoutMs: options.connectTimeoutMs,
      timeoutCode: 'ERR_HTTP_TIMEOUT',
      failureCode: 'ERR_HTTP_FAILED',
      purpose: 'HTTP request',
    }).then(
      (ip) => {
        // The TLS name is the host the policy checked, whatever else undici
        // derived it from (a Host header would otherwise choose the certificate).
        const isName = classifyHost(hostname).kind === 'name';
        const servername = isName ? hostname : undefined;
        dial(
          {
            ...connectOptions,
            hostname: ip.address,
            servername,
          },
          callback,
        );
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null),
    );
  };
  return new Agent({ connect, keepAliveTimeout: 4_000, connections: options.connectionsPerOrigin });
}
