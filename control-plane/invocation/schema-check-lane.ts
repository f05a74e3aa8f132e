/**
 * One lane of schema checks (see schema-checker.ts): worker threads that
 * take one check at a time, each under a deadline, and the checks waiting
 * for them, by server.
 *
 * Whose check runs next: a server has at most one check running in a lane,
 * and a free worker takes the oldest waiting check of the server that has
 * used the least worker time lately (schema-check-usage.ts). However many
 * servers flood a lane, a server that checks now and then has used less
 * than each of them, so its check is the next to start: it waits for a
 * worker to come free, never for the floods' queues.
 *
 * The deadline counts the check's own run only: from when the worker has
 * it (loaded, and free) to its answer. A check still running at the
 * deadline fails as "could not be checked" and its worker is terminated. A
 * lane with a spare (`spares`) keeps a worker loaded beside its own from
 * its first overrun on, which takes over at once: the checks waiting never
 * wait for a worker to load (240 ms built, seconds under tsx on a loaded
 * machine), which otherwise a flood of overruns would make them do after
 * every deadline. Without one, the replacement loads first.
 */
import type { Worker } from 'node:worker_threads';
import type { SchemaCheckRequest, SchemaCheckWorkerMessage } from './schema-check-protocol.js';
import type { ServerUsage } from './schema-check-usage.js';
import type { SchemaCheck } from './tool-schemas.js';
import { startWorker } from './worker-entry.js';

/**
 * V8 old space of a worker, in MiB: a value of MAX_BODY_BYTES parsed, the
 * compiled-schema cache, and room for a compile (one that needed more than
 * this before compiles were bounded took 1.8 GB) without the process's heap.
 */
export const SCHEMA_CHECK_WORKER_HEAP_MB = 384;

/** How one check went through a lane: for metrics and tests. */
export interface LaneRecord {
  readonly server: string;
  /** From its arrival in the lane to its start in a worker, in ms. */
  readonly waitedMs: number;
  /** Checks (of any server) that started in the lane while it waited. */
  readonly startedAhead: number;
  /** Its run in the worker, in ms, as the worker measured it (to the deadline when it overran). */
  readonly ranMs: number;
  /** It ran to the deadline (its worker was replaced). */
  readonly overran: boolean;
}

/** How a lane is built. */
export interface LaneOptions {
  /** Worker threads; at least 1. */
  workers: number;
  /** Loaded workers kept to replace one that overran (0 or 1), started at the first overrun. */
  spares: number;
  /** Longest one check may run in a worker, in ms. */
  timeoutMs: number;
  /** Worker time by server, shared by the lanes of one checker. */
  usage: ServerUsage;
  /** Called when a check of `server` overran. */
  onOverrun: (server: string) => void;
  /** Called as each check is answered (not when the lane closes). */
  onRecord?: (record: LaneRecord) => void;
}

interface PendingCheck {
  readonly request: SchemaCheckRequest;
  readonly answer: (check: SchemaCheck) => void;
  readonly arrivedAt: number;
  /** The lane's count of started checks when it arrived. */
  readonly startedBefore: number;
}

/** One worker thread and the check it runs; `ready` once it has loaded. */
interface WorkerSlot {
  readonly worker: Worker;
  ready: boolean;
  running?: {
    check: PendingCheck;
    startedAt: number;
    startedAhead: number;
    deadline: NodeJS.Timeout;
  };
}

export class SchemaCheckLane {
  readonly #options: LaneOptions;
  /** Started on the lane's first check. */
  readonly #slots: (WorkerSlot | undefined)[];
  /** A loaded (or loading) worker that takes the place of one that overran. */
  #spare: WorkerSlot | undefined;
  /** Waiting checks by server, each queue oldest first. */
  readonly #waiting = new Map<string, PendingCheck[]>();
  /** Servers with a check running now. */
  readonly #running = new Set<string>();
  #started = 0;
  #closed = false;

  constructor(options: LaneOptions) {
    if (options.spares !== 0 && options.spares !== 1) {
      throw new TypeError(`SchemaCheckLane: spares must be 0 or 1, got ${options.spares}`);
    }
    for (const bound of ['workers', 'timeoutMs'] as const) {
      if (!Number.isInteger(options[bound]) || options[bound] < 1) {
        throw new TypeError(
          `SchemaCheckLane: ${bound} must be a positive integer, got ${options[bound]}`,
        );
      }
    }
    this.#options = options;
    this.#slots = new Array(options.workers).fill(undefined);
  }

  /** Workers loaded and taking checks now. */
  get readyWorkers(): number {
    return this.#slots.filter((slot) => slot?.ready === true).length;
  }

  /** Runs `request` in a worker of this lane when its turn comes. */
  check(request: SchemaCheckRequest): Promise<SchemaCheck> {
    if (this.#closed) return Promise.resolve(unchecked('the control plane is shutting down'));
    return new Promise((answer) => {
      const pending: PendingCheck = {
        request,
        answer,
        arrivedAt: performance.now(),
        startedBefore: this.#started,
      };
      const server = request.subject.server;
      const queue = this.#waiting.get(server);
      if (queue === undefined) this.#waiting.set(server, [pending]);
      else queue.push(pending);
      this.#dispatch();
    });
  }

  /** Answers waiting and running checks as unchecked and stops the workers. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const queue of this.#waiting.values()) {
      for (const pending of queue) pending.answer(unchecked('the control plane is shutting down'));
    }
    this.#waiting.clear();
    const stopping = this.#slots.map((slot, index) => {
      if (slot === undefined) return undefined;
      this.#slots[index] = undefined;
      if (slot.running !== undefined) {
        clearTimeout(slot.running.deadline);
        slot.running.check.answer(unchecked('the control plane is shutting down'));
      }
      return discard(slot.worker);
    });
    if (this.#spare !== undefined) stopping.push(discard(this.#spare.worker));
    this.#spare = undefined;
    await Promise.all(stopping);
  }

  /** Hands waiting checks to idle workers, starting workers that are missing. */
  #dispatch(): void {
    if (this.#closed) return;
    for (let index = 0; index < this.#slots.length; index++) {
      if (this.#waiting.size === 0) return;
      const slot = this.#slots[index] ?? this.#fill(index);
      if (slot === undefined) return;
      if (!slot.ready || slot.running !== undefined) continue;
      const next = this.#nextCheck();
      if (next === undefined) return;
      // A check that could not be handed over leaves the worker free for the next one.
      if (!this.#run(slot, index, next)) index--;
    }
  }

  /**
   * The oldest waiting check of the server, among those with none running,
   * that has used the least worker time lately (the oldest check first
   * between equals).
   */
  #nextCheck(): PendingCheck | undefined {
    let chosen: { server: string; queue: PendingCheck[]; used: number } | undefined;
    for (const [server, queue] of this.#waiting) {
      if (this.#running.has(server)) continue;
      const used = this.#options.usage.of(server);
      if (
        chosen === undefined ||
        used < chosen.used ||
        (used === chosen.used && queue[0]!.arrivedAt < chosen.queue[0]!.arrivedAt)
      ) {
        chosen = { server, queue, used };
      }
    }
    if (chosen === undefined) return undefined;
    const next = chosen.queue.shift()!;
    if (chosen.queue.length === 0) this.#waiting.delete(chosen.server);
    return next;
  }

  /** Hands `check` to the worker in slot `index`; false (and the check answered) when it cannot be copied. */
  #run(slot: WorkerSlot, index: number, check: PendingCheck): boolean {
    // Copying the value is this thread's time (55 ms for a 4 MB argument), not the worker's:
    // the deadline starts once it is posted.
    try {
      slot.worker.postMessage(check.request);
    } catch (error) {
      // Values come parsed from JSON; anything else is not a value a schema describes.
      const reason = error instanceof Error ? error.message : String(error);
      check.answer(unchecked(`the value cannot be copied to a checker: ${reason}`));
      return false;
    }
    const server = check.request.subject.server;
    this.#running.add(server);
    const startedAhead = this.#started - check.startedBefore;
    this.#started++;
    const deadline = setTimeout(() => {
      this.#options.onOverrun(server);
      this.#replace(index, `it took longer than ${this.#options.timeoutMs} ms`, true);
    }, this.#options.timeoutMs);
    slot.running = { check, startedAt: performance.now(), startedAhead, deadline };
    slot.worker.ref();
    return true;
  }

  /** A new worker in slot `index`; undefined (and the waiting checks answered) when none can start. */
  #fill(index: number): WorkerSlot | undefined {
    const slot = this.#start();
    this.#slots[index] = slot;
    return slot;
  }

  /** A new worker, loading; undefined (and the waiting checks answered) when none can start. */
  #start(): WorkerSlot | undefined {
    let worker: Worker;
    try {
      worker = startWorker('schema-check-worker', {
        resourceLimits: { maxOldGenerationSizeMb: SCHEMA_CHECK_WORKER_HEAP_MB },
        // The service's own flags (tsx's loader among them) are not the worker's business.
        execArgv: [],
      });
    } catch (error) {
      this.#failWaiting(error instanceof Error ? error.message : String(error));
      return undefined;
    }
    const slot: WorkerSlot = { worker, ready: false };
    worker.on('message', (message: SchemaCheckWorkerMessage) => {
      if (message.kind === 'ready') slot.ready = true;
      else if (slot.running?.check.request.id === message.id) {
        this.#finish(slot, message.check, message.workerMs);
      }
      this.#dispatch();
      // A worker keeps the process up while it loads or checks, not while it waits.
      if (slot.running === undefined) worker.unref();
    });
    // An uncaught error, or the heap limit: the thread is gone, and its check with it.
    worker.on('error', (error) => this.#lost(slot, error.message));
    worker.on('exit', (code) => this.#lost(slot, `its worker exited (${code})`));
    return slot;
  }

  /**
   * The running check's answer. `workerMs`: its time in the worker as the
   * worker measured it; undefined when it did not answer (it overran, or
   * its worker died), when its time is what it held the worker.
   */
  #finish(slot: WorkerSlot, check: SchemaCheck, workerMs?: number, overran = false): void {
    const running = slot.running!;
    slot.running = undefined;
    clearTimeout(running.deadline);
    const server = running.check.request.subject.server;
    this.#running.delete(server);
    const ranMs = workerMs ?? performance.now() - running.startedAt;
    this.#options.usage.charge(server, ranMs);
    this.#options.onRecord?.({
      server,
      waitedMs: running.startedAt - running.check.arrivedAt,
      startedAhead: running.startedAhead,
      ranMs,
      overran,
    });
    running.check.answer(check);
  }

  /**
   * The check running in slot `index` overran, or its worker died: the check
   * is answered and the worker replaced at once — by the spare, else by a
   * new worker (it loads while no check waits on it) — and waiting checks go
   * on.
   */
  #replace(index: number, problem: string, overran: boolean): void {
    const slot = this.#slots[index];
    if (slot === undefined || this.#closed) return;
    void discard(slot.worker);
    // The spare, loaded or furthest along in loading, else a new worker. One that
    // cannot start leaves the slot empty, never the discarded worker.
    const spare = this.#spare;
    this.#spare = undefined;
    this.#slots[index] = spare ?? this.#start();
    if (overran && this.#options.spares > 0 && this.#spare === undefined) {
      this.#spare = this.#start();
    }
    if (slot.running !== undefined) this.#finish(slot, unchecked(problem), undefined, overran);
    this.#dispatch();
  }

  #lost(slot: WorkerSlot, reason: string): void {
    if (slot === this.#spare) {
      // Nothing ran on it: the next overrun starts another.
      this.#spare = undefined;
      void discard(slot.worker);
      return;
    }
    const index = this.#slots.indexOf(slot);
    if (index < 0) return;
    if (!slot.ready) {
      // It failed while loading: another would too. The checks waiting now are
      // answered; the next check tries again.
      this.#slots[index] = undefined;
      void discard(slot.worker);
      this.#failWaiting(reason);
      return;
    }
    this.#replace(index, `the check stopped: ${reason}`, false);
  }

  #failWaiting(reason: string): void {
    for (const queue of this.#waiting.values()) {
      for (const pending of queue) {
        pending.answer(unchecked(`the schema checker could not start: ${reason}`));
      }
    }
    this.#waiting.clear();
  }
}

/** Stops a worker whose events no longer matter (a late 'error' must not go unheard: it would throw). */
async function discard(worker: Worker): Promise<void> {
  worker.removeAllListeners();
  worker.on('error', () => undefined);
  await worker.terminate();
}

/** A check that could not run to its verdict. */
export function unchecked(problem: string): SchemaCheck {
  return { ok: false, reason: 'unchecked', problem };
}
