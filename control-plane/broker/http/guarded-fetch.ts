/**
 * A `fetch` for the control plane's own outbound requests on behalf of an
 * operator's configuration — Authorization Server metadata and JWKS — that
 * dials through the same egress policy as tool traffic. Saving an OAuth
 * Server URL of `https://169.254.169.254/` or of this host's own address is
 * then refused before any connection is made.
 */
import { fetch as undiciFetch, type Agent } from 'undici';
import type { EgressPolicy } from '../egress/egress-policy.js';
import type { HostLookup } from '../egress/checked-resolver.js';
import { createGuardedAgent } from './guarded-agent.js';

/** Options of createGuardedFetch. */
export interface GuardedFetchOptions {
  policy: EgressPolicy;
  lookup: HostLookup;
  /** Also allow loopback (127.0.0.0/8, ::1): OAUTH_ALLOW_INSECURE_LOOPBACK, development only. */
  allowLoopback: boolean;
  /** Resolve + TCP/TLS handshake limit per connection, in ms. */
  connectTimeoutMs: number;
}

/** A guarded fetch and the agent behind it (close the agent at shutdown). */
export interface GuardedFetch {
  fetch: typeof fetch;
  agent: Agent;
}

/** Creates the fetch; requests keep their own deadlines (signal). */
export function createGuardedFetch(options: GuardedFetchOptions): GuardedFetch {
  const policy = options.allowLoopback
    ? options.policy.withServerAllow(['127.0.0.0/8', '::1'])
    : options.policy;
  const agent = createGuardedAgent({
    policy,
    lookup: options.lookup,
    connectTimeoutMs: options.connectTimeoutMs,
    connectionsPerOrigin: 4,
  });
  const guarded = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = input instanceof Request ? input.url : input;
    // undici's own fetch (the npm one, matching the Agent), typed as the global one it mirrors.
    return undiciFetch(url, {
      ...(init as Parameters<typeof undiciFetch>[1]),
      dispatcher: agent,
    }) as unknown as Promise<Response>;
  };
  return { fetch: guarded as typeof fetch, agent };
}
