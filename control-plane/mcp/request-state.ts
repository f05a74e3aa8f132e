/**
 * The `requestState` of a modern-era call that waits for input from its
 * client (MCP 2026-07-28, multi round-trip requests): which parked
 * invocation the retry resumes, sealed so that the client can neither read
 * nor change it (AES-256-GCM under a key derived from the master key, see
 * accounts' CookieSealer), and bound to everything the retry must repeat:
 * the server, the caller, the tool (or prompt, or resource), a digest of the
 * arguments, the round and an expiry. Any replica opens it; the replica that
 * holds the invocation checks the round, which makes each state single use.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { CookieSealer } from '../identity/index.js';

/** What a parked call is: a tool call, a prompt rendered by code, a resource read from code. */
export type ParkedTarget =
  | { kind: 'tool'; name: string }
  | { kind: 'prompt'; name: string }
  | { kind: 'resource'; name: string };

/** Everything a retry must match to resume a parked invocation. */
export interface RequestStateBinding {
  /** The hosted server (subdomain). */
  server: string;
  /** The caller's identity key (caller-identity.ts): another caller's state is refused. */
  callerKey: string;
  target: ParkedTarget;
  /** SHA-256 of the arguments as the first request sent them (argumentsDigest). */
  argsDigest: string;
}

/** The sealed payload: the binding, and where and at which round the invocation waits. */
export interface RequestState extends RequestStateBinding {
  /** The parked invocation's id. */
  parkId: string;
  /** The replica holding it (its plane id): a retry landing elsewhere is relayed there. */
  replica: string;
  /** The round this state answers (1 for the first input_required). */
  round: number;
}

const PayloadSchema = z.strictObject({
  s: z.string(),
  c: z.string(),
  k: z.enum(['tool', 'prompt', 'resource']),
  n: z.string(),
  a: z.string(),
  p: z.string(),
  r: z.string(),
  i: z.number().int().positive(),
});

/** Seals and opens request states; one per control plane, the key shared by every replica. */
export class RequestStateSealer {
  readonly #sealer: CookieSealer;

  constructor(masterKey: Uint8Array, now?: () => number) {
    this.#sealer = new CookieSealer(masterKey, 'mcp-request-state', { now });
  }

  /** The state of `state`, valid for `ttlMs` (rounded up to whole seconds). */
  seal(state: RequestState, ttlMs: number): string {
    const payload: z.infer<typeof PayloadSchema> = {
      s: state.server,
      c: state.callerKey,
      k: state.target.kind,
      n: state.target.name,
      a: state.argsDigest,
      p: state.parkId,
      r: state.replica,
      i: state.round,
    };
    return this.#sealer.seal(payload, Math.max(1, Math.ceil(ttlMs / 1000)));
  }

  /** The state sealed in `value`; undefined when it is not one of ours, was altered, or expired. */
  open(value: unknown): RequestState | undefined {
    const parsed = PayloadSchema.safeParse(this.#sealer.open(value));
    if (!parsed.success) return undefined;
    const { s, c, k, n, a, p, r, i } = parsed.data;
    return {
      server: s,
      callerKey: c,
      target: { kind: k, name: n },
      argsDigest: a,
      parkId: p,
      replica: r,
      round: i,
    };
  }
}

/**
 * What a request can resume, read from its raw params as the handlers read
 * them (tool-call.ts, entry-handlers.ts): the binding its state must carry.
 * Undefined for a method that never parks or params that name nothing.
 */
export function bindingOfRequest(
  server: string,
  callerKey: string,
  method: string,
  params: unknown,
): RequestStateBinding | undefined {
  const read = (params ?? {}) as { name?: unknown; uri?: unknown; arguments?: unknown };
  const target: ParkedTarget | undefined =
    method === 'tools/call' && typeof read.name === 'string'
      ? { kind: 'tool', name: read.name }
      : method === 'prompts/get' && typeof read.name === 'string'
        ? { kind: 'prompt', name: read.name }
        : method === 'resources/read' && typeof read.uri === 'string'
          ? { kind: 'resource', name: read.uri }
          : undefined;
  if (target === undefined) return undefined;
  const args = target.kind === 'resource' ? {} : (read.arguments ?? {});
  return { server, callerKey, target, argsDigest: argumentsDigest(args) };
}

/** True when a state opened for this request is bound to exactly this request. */
export function matchesBinding(state: RequestState, binding: RequestStateBinding): boolean {
  return (
    state.server === binding.server &&
    state.callerKey === binding.callerKey &&
    state.target.kind === binding.target.kind &&
    state.target.name === binding.target.name &&
    state.argsDigest === binding.argsDigest
  );
}

/**
 * A digest of a request's arguments that does not depend on the order the
 * client wrote their keys in: a retry repeats the arguments, not their bytes.
 */
export function argumentsDigest(args: unknown): string {
  let text: string;
  try {
    text = canonicalJson(args);
  } catch {
    // Nested deeper than this stack goes: the text as parsed stands for itself.
    text = `raw:${JSON.stringify(args)}`;
  }
  return createHash('sha256').update(text).digest('base64url');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys
      .map(
        (key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`,
      )
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
