/** The broker's public surface: sdk.http and sdk.db behind the egress policy. */
export { Broker, type BrokerOptions, type BrokerCallContext } from './broker.js';
export { EgressPolicy } from './egress/egress-policy.js';
export { systemLookup, type HostLookup } from './egress/checked-resolver.js';
export type { IpLiteral } from './egress/ip-address.js';
export { parseEgressAllowEntry } from './egress/allow-entry.js';
export { createGuardedFetch, type GuardedFetch } from './http/guarded-fetch.js';
