/**
 * Tool schemas checked off the control plane's thread, each check under a
 * deadline. Validation can be exponential in the value checked (a 200-byte
 * schema over 30 levels of nesting takes a minute) and `uniqueItems` over
 * objects is quadratic; no rule at save finds every such schema. So values
 * are checked in worker threads (schema-check-worker.ts), and a check still
 * running at the deadline fails as "could not be checked": its worker is
 * terminated and replaced, and the checks queued behind it go to the new one.
 *
 * Fairness between servers: each worker takes one check at a time, a server
 * has at most one check running, and waiting checks are taken round-robin
 * by server. With SCHEMA_CHECK_WORKERS workers, a server whose every check
 * runs to the deadline holds one worker, never all (once one overran, its
 * checks stay on that worker: OVERRUN_BINDING_MS); another server's check
 * waits at most for the checks already running plus one round of the other
 * servers with checks waiting (docs/decisions.md, "Tool schemas are checked
 * in worker threads").
 */
import type { Worker } from 'node:worker_threads';
import type { ToolJsonSchema } from '../store/index.js';
import type { SchemaCheckRequest, SchemaCheckWorkerMessage } from './schema-check-protocol.js';
import type { SchemaCheck, SchemaRole, SchemaSubject } from './tool-schemas.js';
import { startWorker } from './worker-entry.js';

/** Worker threads checking schemas. Two: one server that stalls its checks holds one, never both. */
export const SCHEMA_CHECK_WORKERS = 2;

/**
 * V8 old space of a worker, in MiB: a value of MAX_BODY_BYTES parsed, the
 * compiled-schema cache, and room for a compile (one that needed more than
 * this before compiles were bounded took 1.8 GB) without the process's heap.
 */
export const SCHEMA_CHECK_WORKER_HEAP_MB = 384;

/**
 * How long a server whose check overran stays bound to the worker it overran
 * in. Without it, the server's next check went to the other worker and
 * overran there too: both workers were replaced every deadline, each time
 * dropping every server's compiled schemas (measured: another server's checks
 * fell from ~40 to 2–4 a second, one failing as unchecked). Bound, it
 * replaces only its own worker; the other keeps serving everyone else.
 */
export const OVERRUN_BINDING_MS = 60_000;

/** What a {@link SchemaChecker} is configured with (TOOL_SCHEMA_CHECK_TIMEOUT_MS). */
export interface SchemaCheckSettings {
  /** Longest one check may run in its worker, compiling the schema included, in ms. */
  timeoutMs: number;
}

/** What the checker needs of a tool: where it lives, its version, its schemas. */
export interface SchemaBearingTool {
  readonly subdomain: string;
  readonly name: string;
  readonly version: number;
  readonly inputSchema?: ToolJsonSchema;
  readonly outputSchema?: ToolJsonSchema;
}

interface PendingCheck {
  readonly request: SchemaCheckRequest;
  readonly answer: (check: SchemaCheck) => void;
}

/** One worker thread and the check it runs; `ready` once it has loaded. */
interface WorkerSlot {
  readonly worker: Worker;
  ready: boolean;
  running?: { check: PendingCheck; deadline: NodeJS.Timeout };
}

export class SchemaChecker {
  readonly #timeoutMs: number;
  /** Started on the first check: a control plane whose tools declare no schema starts no thread. */
  readonly #slots: (WorkerSlot | undefined)[] = new Array(SCHEMA_CHECK_WORKERS).fill(undefined);
  /** Waiting checks by server; the map's order is the round-robin order. */
  readonly #waiting = new Map<string, PendingCheck[]>();
  /** Servers with a check running now. */
  readonly #running = new Set<string>();
  /** Servers whose check overran: the slot they may use, and until when (see OVERRUN_BINDING_MS). */
  readonly #bound = new Map<string, { slot: number; until: number }>();
  /** JSON text of schema objects already seen (records are frozen and replaced on change). */
  readonly #texts = new WeakMap<ToolJsonSchema, string>();
  #nextId = 1;
  #closed = false;

  /** `settings.timeoutMs` must be a positive integer (a TypeError otherwise). */
  constructor(settings: SchemaCheckSettings) {
    if (!Number.isInteger(settings?.timeoutMs) || settings.timeoutMs < 1) {
      throw new TypeError(
        `SchemaChecker: timeoutMs must be a positive integer, got ${settings?.timeoutMs}`,
      );
    }
    this.#timeoutMs = settings.timeoutMs;
  }

  /** Workers loaded and taking checks now (0 until the first check; a replaced one reloads). */
  get readyWorkers(): number {
    return this.#slots.filter((slot) => slot?.ready === true).length;
  }

  /** Checks `value` against the tool's schema in `role`; a tool without one passes. */
  check(tool: SchemaBearingTool, role: SchemaRole, value: unknown): Promise<SchemaCheck> {
    const schema = tool[role];
    if (schema === undefined) return Promise.resolve({ ok: true });
    if (this.#closed) return Promise.resolve(unchecked('the control plane is shutting down'));
    const subject: SchemaSubject = {
      server: tool.subdomain,
      tool: tool.name,
      version: tool.version,
      role,
      schemaText: this.#textOf(schema),
    };
    return new Promise((answer) => {
      const request = { id: this.#nextId++, subject, value };
      const queue = this.#waiting.get(subject.server);
      if (queue === undefined) this.#waiting.set(subject.server, [{ request, answer }]);
      else queue.push({ request, answer });
      this.#dispatch();
    });
  }

  /** Answers waiting checks as unchecked and stops the workers. */
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
    await Promise.all(stopping);
  }

  #textOf(schema: ToolJsonSchema): string {
    let text = this.#texts.get(schema);
    if (text === undefined) {
      text = JSON.stringify(schema);
      this.#texts.set(schema, text);
    }
    return text;
  }

  /** Hands waiting checks to idle workers, starting workers that are missing. */
  #dispatch(): void {
    if (this.#closed) return;
    for (let index = 0; index < this.#slots.length; index++) {
      if (this.#waiting.size === 0) return;
      const slot = this.#slots[index] ?? this.#start(index);
      if (slot === undefined) return;
      if (!slot.ready || slot.running !== undefined) continue;
      const next = this.#nextCheck(index);
      // None this worker may take (the rest are bound to another): try the next worker.
      if (next === undefined) continue;
      // A check that could not be handed over leaves the worker free for the next one.
      if (!this.#run(slot, index, next)) index--;
    }
  }

  /**
   * The first waiting check, round-robin by server, of a server with none
   * running that may use slot `index`.
   */
  #nextCheck(index: number): PendingCheck | undefined {
    for (const [server, queue] of this.#waiting) {
      if (this.#running.has(server) || !this.#mayUse(server, index)) continue;
      const next = queue.shift()!;
      // To the back of the round, or out of it when it has nothing more waiting.
      this.#waiting.delete(server);
      if (queue.length > 0) this.#waiting.set(server, queue);
      return next;
    }
    return undefined;
  }

  #mayUse(server: string, index: number): boolean {
    const bound = this.#bound.get(server);
    if (bound === undefined) return true;
    if (bound.until <= Date.now()) {
      this.#bound.delete(server);
      return true;
    }
    return bound.slot === index;
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
    const deadline = setTimeout(() => {
      this.#bound.set(server, { slot: index, until: Date.now() + OVERRUN_BINDING_MS });
      this.#replace(index, `it took longer than ${this.#timeoutMs} ms`);
    }, this.#timeoutMs);
    slot.running = { check, deadline };
    slot.worker.ref();
    return true;
  }

  /** A new worker in slot `index`; undefined (and the waiting checks answered) when none can start. */
  #start(index: number): WorkerSlot | undefined {
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
      else if (slot.running?.check.request.id === message.id) this.#finish(slot, message.check);
      this.#dispatch();
      // A worker keeps the process up while it loads or checks, not while it waits.
      if (slot.running === undefined) worker.unref();
    });
    // An uncaught error, or the heap limit: the thread is gone, and its check with it.
    worker.on('error', (error) => this.#lost(index, worker, error.message));
    worker.on('exit', (code) => this.#lost(index, worker, `its worker exited (${code})`));
    this.#slots[index] = slot;
    return slot;
  }

  #finish(slot: WorkerSlot, check: SchemaCheck): void {
    const running = slot.running!;
    slot.running = undefined;
    clearTimeout(running.deadline);
    this.#running.delete(running.check.request.subject.server);
    running.check.answer(check);
  }

  /**
   * The check running in slot `index` overran, or its worker died: the check
   * is answered, the worker replaced at once (it loads while no check waits
   * on it), and waiting checks go on.
   */
  #replace(index: number, problem: string): void {
    const slot = this.#slots[index];
    if (slot === undefined || this.#closed) return;
    void discard(slot.worker);
    // A replacement that cannot start leaves the slot empty, never the discarded worker.
    if (this.#start(index) === undefined) this.#slots[index] = undefined;
    if (slot.running !== undefined) this.#finish(slot, unchecked(problem));
    this.#dispatch();
  }

  #lost(index: number, worker: Worker, reason: string): void {
    const slot = this.#slots[index];
    if (slot?.worker !== worker) return;
    if (!slot.ready) {
      // It failed while loading: another would too. The checks waiting now are
      // answered; the next check tries again.
      this.#slots[index] = undefined;
      void discard(slot.worker);
      this.#failWaiting(reason);
      return;
    }
    this.#replace(index, `the check stopped: ${reason}`);
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

function unchecked(problem: string): SchemaCheck {
  return { ok: false, reason: 'unchecked', problem };
}
