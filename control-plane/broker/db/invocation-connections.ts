/**
 * The database connections of running invocations. A `sdk.db(...)` handle
 * holds one connection per database for the whole invocation (calls with the
 * same connection parameters share it), so `BEGIN … COMMIT` spread over
 * several calls behaves as a tool author expects. When the invocation ends
 * (returned, failed, timed out, cancelled, its container gone), a statement
 * still running is cancelled on the database — it would otherwise go on
 * holding its locks and its pool slot long after anyone waits for it — and
 * each connection is rolled back and reset before it goes back to its pool
 * (see PooledConnection.release); one whose statement will not stop, or
 * whose reset fails or hangs, is destroyed.
 */
import { McphostError, cancelledError } from '../../errors.js';
import type { DbConnection } from '../../../src/protocol/index.js';
import {
  allConnectionsHeldMessage,
  type PooledConnection,
  type StatementRunner,
} from './database-pool.js';
import { poolKey, type PoolLease, type PoolRegistry } from './pool-registry.js';

/** Who makes a database call: the invocation's server and id, and the call's signal. */
export interface DatabaseCaller {
  /** Aborted when the call is cancelled or the invocation ends. */
  signal: AbortSignal;
  /** The server (tenant); its connections never serve another server. */
  server: string;
  /** The invocation; it holds its connections until `end(invocation)`. */
  invocation: string;
}

/** Options of InvocationConnections. */
export interface InvocationConnectionsOptions {
  registry: PoolRegistry;
  /** Connections per pool, for the message when all are held. */
  maxConnectionsPerPool: number;
  /** Longest wait for a free connection of a pool (longer than the drivers' connect timeout), and for a reset, ms. */
  acquireTimeoutMs: number;
  /**
   * Longest wait for statements still running when their invocation ends to
   * stop once cancelled, ms; then the connection is destroyed.
   */
  drainTimeoutMs: number;
}

/** First wait before a statement that is still running is cancelled again, ms; doubles up to a second. */
const CANCEL_REPEAT_FIRST_MS = 100;
const CANCEL_REPEAT_MAX_MS = 1_000;

type Taken = { lease: PoolLease; connection: PooledConnection };
type Held = { ready: Promise<Taken>; running: Set<Promise<unknown>> };

/** Per-invocation connections over the shared pools. */
export class InvocationConnections {
  readonly #options: InvocationConnectionsOptions;
  readonly #invocations = new Map<string, Map<string, Held>>();
  readonly #ending = new Set<Promise<void>>();

  constructor(options: InvocationConnectionsOptions) {
    this.#options = options;
  }

  /** Runs `work` on the caller's invocation connection to this database, taking one on first use. */
  async run<T>(
    caller: DatabaseCaller,
    type: 'pg' | 'mysql',
    connection: DbConnection,
    work: (runner: StatementRunner) => Promise<T>,
  ): Promise<T> {
    const { signal } = caller;
    if (signal.aborted) throw cancelled();
    const held = this.#hold(caller, type, connection);
    const taken = await raceAbort(held.ready, signal);
    // A call cancelled while it waited for a connection must not reach the database
    // (an INSERT would commit after the tool was told it was cancelled).
    if (signal.aborted) throw cancelled();
    const running = work(taken.connection);
    const forget = (): void => void held.running.delete(running);
    held.running.add(running);
    running.then(forget, forget);
    return raceAbort(running, signal);
  }

  /**
   * Gives back every connection the invocation holds, once its running
   * statements settle: rolled back and reset, or destroyed. Resolves when
   * done; never rejects. Calls of the invocation must have ended (their
   * signals aborted) before.
   */
  end(invocation: string): Promise<void> {
    const held = this.#invocations.get(invocation);
    if (held === undefined) return Promise.resolve();
    this.#invocations.delete(invocation);
    const done = Promise.all([...held.values()].map((each) => this.#giveBack(each))).then(
      () => undefined,
    );
    this.#ending.add(done);
    void done.then(() => this.#ending.delete(done));
    return done;
  }

  /** Gives back every connection of every invocation (shutdown). */
  async endAll(): Promise<void> {
    await Promise.all([...this.#invocations.keys()].map((invocation) => this.end(invocation)));
    await Promise.all([...this.#ending]);
  }

  #hold(caller: DatabaseCaller, type: 'pg' | 'mysql', connection: DbConnection): Held {
    let byKey = this.#invocations.get(caller.invocation);
    if (byKey === undefined) {
      byKey = new Map();
      this.#invocations.set(caller.invocation, byKey);
    }
    const key = poolKey(caller.server, type, connection);
    const existing = byKey.get(key);
    if (existing !== undefined) return existing;
    const held: Held = { ready: this.#take(caller.server, type, connection), running: new Set() };
    byKey.set(key, held);
    const table = byKey;
    // A connection that could not be taken is tried again by the invocation's next call.
    held.ready.catch(() => {
      if (table.get(key) === held) table.delete(key);
    });
    return held;
  }

  async #take(server: string, type: 'pg' | 'mysql', connection: DbConnection): Promise<Taken> {
    const lease = await this.#options.registry.lease(server, type, connection);
    try {
      const taken = await within(
        () => lease.pool.acquire(),
        this.#options.acquireTimeoutMs,
        (late) => void late.release(),
      );
      if (taken === undefined) {
        // A driver-level failure: the broker names the database in front of it.
        throw new Error(
          allConnectionsHeldMessage(
            this.#options.maxConnectionsPerPool,
            this.#options.acquireTimeoutMs,
          ),
        );
      }
      return { lease, connection: taken.value };
    } catch (error) {
      lease.release();
      throw error;
    }
  }

  async #giveBack(held: Held): Promise<void> {
    let taken: Taken;
    try {
      taken = await held.ready;
    } catch {
      return; // never taken: nothing to give back
    }
    const { lease, connection } = taken;
    try {
      // A reset would only queue behind a running statement; one that will not stop
      // means the connection cannot be trusted.
      if (!(await this.#stopStatements(held, connection))) return connection.destroy();
      const reset = await within(() => connection.release(), this.#options.acquireTimeoutMs);
      if (reset === undefined) connection.destroy();
    } finally {
      lease.release();
    }
  }

  /**
   * Cancels the statements of `held` still running until none is, within
   * `drainTimeoutMs`; true when they all ended. One cancel stops the statement
   * running now: a call sent a moment before (still on its way to the database)
   * or queued behind it on the same connection starts next, so the cancel is
   * repeated, sooner at first, while any is left.
   */
  async #stopStatements(held: Held, connection: PooledConnection): Promise<boolean> {
    const deadline = Date.now() + this.#options.drainTimeoutMs;
    let pause = CANCEL_REPEAT_FIRST_MS;
    while (held.running.size > 0) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await connection.cancelStatement();
      const oneEnded = Promise.race([...held.running].map((each) => each.then(noop, noop)));
      await within(() => oneEnded, Math.min(pause, Math.max(0, deadline - Date.now())));
      pause = Math.min(pause * 2, CANCEL_REPEAT_MAX_MS);
    }
    return true;
  }
}

function noop(): void {}

/**
 * `{value}` of `start()`, or undefined when it takes longer than `ms`; a value
 * that arrives late is handed to `late` (to give back what was acquired).
 */
async function within<T>(
  start: () => Promise<T>,
  ms: number,
  late?: (value: T) => void,
): Promise<{ value: T } | undefined> {
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const deadline = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      timedOut = true;
      resolve(undefined);
    }, ms);
  });
  const work = start().then((value) => {
    if (timedOut) late?.(value);
    return { value };
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function cancelled(): McphostError {
  return cancelledError('database call');
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(cancelled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(cancelled());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
