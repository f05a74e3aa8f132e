/**
 * Which warm pool serves an invocation. The isolation unit is the server: by
 * default every tool of one server shares its containers (each invocation
 * still gets a fresh context with only its own tool's secrets). A server with
 * `isolation: "tool"` and every `strict` tool get a pool of their own. The
 * container shape (memory, CPU, pids, runtime) is part of the key, so a tool
 * whose limits differ from its server's gets a pool of that shape, and no
 * container is ever shared by two servers: the server is always the key's head.
 */
import type { ToolRuntime } from '../invocation.js';

/** The shape a container is created with; containers of different shapes never mix. */
export interface ContainerShape {
  /** Memory limit, in MiB. */
  memoryMb: number;
  /** CPU share, in cores. */
  cpus: number;
  /** Largest number of processes/threads. */
  pids: number;
  /** OCI runtime: runc, or gVisor's runsc. */
  runtime: 'runc' | 'runsc';
}

/** Where a pool belongs: its server, and its tool when the tool has containers of its own. */
export interface PoolIdentity {
  key: string;
  server: string;
  /** Set when the pool serves one tool only (`isolation: "tool"` or `strict`). */
  tool?: string;
  shape: ContainerShape;
}

/** The pool that serves `runtime`. */
export function poolIdentityOf(runtime: ToolRuntime): PoolIdentity {
  const { memoryMb, cpus, pids } = runtime.limits;
  const shape: ContainerShape = { memoryMb, cpus, pids, runtime: runtime.runtime };
  const ownPool = runtime.strict || runtime.isolation === 'tool';
  const unit = poolUnitOf(runtime.server, ownPool ? runtime.tool : undefined);
  return {
    key: `${unit}@${shapeLabel(shape)}`,
    server: runtime.server,
    ...(ownPool ? { tool: runtime.tool } : {}),
    shape,
  };
}

/**
 * The unit an admin sizes: a server (`"acme"`: its shared pools, whatever
 * their shape) or one tool with containers of its own (`"acme/report"`).
 * An empty or absent tool name means the server.
 */
export function poolUnitOf(server: string, tool?: string): string {
  return tool ? `${server}/${tool}` : server;
}

/** `128m-0.5c-64p-runc`: the shape as it appears in pool keys. */
export function shapeLabel(shape: ContainerShape): string {
  return `${shape.memoryMb}m-${shape.cpus}c-${shape.pids}p-${shape.runtime}`;
}

/** True when two shapes make interchangeable containers. */
export function sameShape(a: ContainerShape, b: ContainerShape): boolean {
  return (
    a.memoryMb === b.memoryMb && a.cpus === b.cpus && a.pids === b.pids && a.runtime === b.runtime
  );
}
