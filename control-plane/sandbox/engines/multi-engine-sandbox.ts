/**
 * A sandbox driver over several Docker engines (DOCKER_ENGINES): each engine
 * has a driver of its own (a DockerSandbox with its runner image), and every
 * new container is placed by free capacity (engine-placement.ts). Pools need
 * no change: a container lost with its engine exits like any other, its pool
 * starts a replacement, and the replacement lands on an engine that answers.
 *
 * An engine is *down* from the moment it stops answering (a start that fails
 * or hangs and a ping that fails after it, or the periodic check) until it
 * answers again. Going down ends its containers for the pools at once (their
 * `exited` settles, input is refused): an engine that hangs instead of
 * closing its connections must not hold calls or pools. It then rejoins: it
 * is opened anew if it never was (its runner image built or found there), and
 * its leftovers are reaped. An engine that answers but fails a start another
 * engine then takes (a pruned image, a full disk) is passed over for a
 * growing while, so it cannot draw every start to itself; a start that fails
 * on every engine is the spec's own failure and pauses none. `ping` answers while at least one engine is up, so
 * readiness holds as long as one engine serves.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { McphostError, isMcphostError } from '../../errors.js';
import type { SandboxDriver, SandboxExit, SandboxInstance, SandboxSpec } from '../driver.js';
import { placementOrder, type EngineLoad } from './engine-placement.js';

/** The part of a per-engine driver this one uses (a DockerSandbox). */
export type EngineDriver = Omit<SandboxDriver, 'kind'>;

/** One engine as the composition root describes it. */
export interface EngineSource {
  /** Stable name, shown in /api/pools and metrics (the engine's address). */
  name: string;
  /** Prepares the engine (runner image) and returns its driver; rejects when it does not answer. */
  open(): Promise<EngineDriver>;
  /** The engine's memory in MiB and its CPUs (`docker info`). */
  capacity(): Promise<{ memoryMb: number; cpus: number }>;
}

/** What /api/pools and metrics show of one engine. */
export interface EngineStats {
  name: string;
  up: boolean;
  containers: number;
  placedMb: number;
  memoryMb: number;
  cpus: number;
}

export interface MultiEngineSandboxOptions {
  engines: readonly EngineSource[];
  /** How often engines are checked (down ones for rejoining), in ms. */
  checkIntervalMs: number;
  /** A start (create, attach, start) taking longer is abandoned and its engine checked, in ms. */
  startTimeoutMs: number;
  /** Told when an engine goes down or rejoins. */
  log: (message: string, details: Record<string, unknown>) => void;
}

/** Longest pause of an engine that answers but keeps failing starts, in ms. */
const MAX_FAILING_PAUSE_MS = 60_000;

interface EngineState extends EngineLoad {
  source: EngineSource;
  cpus: number;
  driver?: EngineDriver;
  /** A join or check under way: never two at once for one engine. */
  checking?: Promise<void>;
  /** Its being down was logged: one line per outage, not one per check. */
  reportedDown: boolean;
  /** Settles when the engine goes down: its containers count as gone. */
  lost: Promise<void>;
  loseAll: () => void;
  /** Starts that failed in a row while it answered, and until when it is passed over. */
  failedStarts: number;
  pausedUntil: number;
}

export class MultiEngineSandbox implements SandboxDriver {
  readonly kind = 'docker' as const;
  readonly #engines: EngineState[];
  readonly #options: MultiEngineSandboxOptions;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: MultiEngineSandboxOptions) {
    if (options.engines.length === 0) throw new TypeError('MultiEngineSandbox: no engine');
    this.#options = options;
    this.#engines = options.engines.map((source) => ({
      source,
      name: source.name,
      up: false,
      memoryMb: 0,
      cpus: 0,
      placedMb: 0,
      containers: 0,
      reportedDown: false,
      failedStarts: 0,
      pausedUntil: 0,
      ...lossSignal(),
    }));
  }

  /**
   * Checks every engine once, then periodically; fails only when none answers.
   * Called again, it checks again (the timer is set once).
   */
  async open(): Promise<void> {
    await Promise.all(this.#engines.map((engine) => this.#check(engine)));
    // At start, for the operator: which engines were tried.
    if (!this.#engines.some((engine) => engine.up)) throw this.#noEngine(true);
    this.#timer ??= setInterval(() => {
      for (const engine of this.#engines) void this.#check(engine);
    }, this.#options.checkIntervalMs);
    this.#timer.unref();
  }

  /** Each engine's state and what we placed on it. */
  stats(): EngineStats[] {
    return this.#engines.map(({ name, up, containers, placedMb, memoryMb, cpus }) => ({
      name,
      up,
      containers,
      placedMb,
      memoryMb,
      cpus,
    }));
  }

  /**
   * What the engines that are up offer together: the container budget and
   * start concurrency are derived from it when the operator leaves them unset
   * (app/pool-budget.ts). Read once at start: engines joining later add no budget.
   */
  capacity(): { memoryBytes: number; cpus: number } {
    const up = this.#engines.filter((engine) => engine.up);
    return {
      memoryBytes: up.reduce((sum, engine) => sum + engine.memoryMb * 1048576, 0),
      cpus: up.reduce((sum, engine) => sum + engine.cpus, 0),
    };
  }

  async start(spec: SandboxSpec): Promise<SandboxInstance> {
    const now = Date.now();
    const usable = this.#engines.filter((engine) => engine.pausedUntil <= now);
    const candidates = placementOrder(usable, spec.memoryMb, spec.runtime) as EngineState[];
    let lastFailure: unknown;
    // Engines that answered yet failed this start: their fault only if another takes it.
    const failedHere: { engine: EngineState; error: unknown }[] = [];
    for (const engine of candidates) {
      if (!engine.up || engine.driver === undefined) continue;
      try {
        const instance = await this.#startOn(engine, engine.driver, spec);
        for (const failed of failedHere) this.#pauseFailing(failed.engine, failed.error);
        return instance;
      } catch (error) {
        // A spec the driver refuses is the call's own, on every engine.
        if (error instanceof TypeError) throw error;
        lastFailure = error;
        if (!(await this.#answers(engine))) this.#markDown(engine, error);
        else if (isMissingRuntime(error)) await this.#refreshRuntimes(engine);
        else failedHere.push({ engine, error });
      }
    }
    // Failed on every engine that answers: the spec's own failure (a tenant's
    // settings), which must not pause engines for everyone else.
    if (lastFailure !== undefined) throw lastFailure;
    const up = this.#engines.filter((engine) => engine.up);
    if (up.length === 0) throw this.#noEngine();
    const withRuntime = up.filter(
      (engine) => spec.runtime === undefined || (engine.runtimes ?? []).includes(spec.runtime),
    );
    throw new McphostError(
      'ERR_SANDBOX_UNAVAILABLE',
      withRuntime.length === 0
        ? `no Docker engine that answers has the runtime "${spec.runtime}"`
        : 'every Docker engine that answers is failing container starts for now; see the log',
      { details: { runtime: spec.runtime } },
    );
  }

  async #refreshRuntimes(engine: EngineState): Promise<void> {
    const runtimes = await engine.driver?.runtimes().catch(() => undefined);
    if (runtimes !== undefined) engine.runtimes = runtimes;
  }

  /** One start on one engine, bounded; counted against it while its container runs. */
  async #startOn(
    engine: EngineState,
    driver: EngineDriver,
    spec: SandboxSpec,
  ): Promise<SandboxInstance> {
    // Counted before the start: concurrent starts see each other's placement.
    engine.containers += 1;
    engine.placedMb += spec.memoryMb;
    const starting = driver.start(spec);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no container after ${this.#options.startTimeoutMs} ms`)),
        this.#options.startTimeoutMs,
      );
    });
    let instance: SandboxInstance;
    try {
      instance = await Promise.race([starting, deadline]);
    } catch (error) {
      this.#release(engine, spec);
      // One that arrives after we gave up is not left running.
      void starting.then((late) => late.kill()).catch(() => undefined);
      throw error;
    } finally {
      clearTimeout(timer);
    }
    engine.failedStarts = 0;
    const placed = withEngine(instance, engine);
    void placed.exited.then(() => this.#release(engine, spec));
    return placed;
  }

  async reapLeftovers(): Promise<number> {
    return this.#sumOverUp((driver) => driver.reapLeftovers());
  }

  async reapStopped(): Promise<number> {
    return this.#sumOverUp((driver) => driver.reapStopped());
  }

  /** Resolves while at least one engine answers (readiness); marks the others down. */
  async ping(): Promise<void> {
    const answers = await Promise.all(
      this.#engines.map(async (engine) => {
        if (!engine.up) return false;
        const answered = await this.#answers(engine);
        if (!answered) this.#markDown(engine, 'it no longer answers');
        return answered;
      }),
    );
    if (!answers.some(Boolean)) throw this.#noEngine();
  }

  /** Runtimes of any engine that is up, asked afresh (SIGHUP may add one): a server may ask for one some engine has. */
  async runtimes(): Promise<string[]> {
    const lists = await Promise.all(
      this.#engines.map(async (engine) => {
        if (!engine.up || engine.driver === undefined) return undefined;
        const runtimes = await engine.driver.runtimes().catch(() => undefined);
        if (runtimes !== undefined) engine.runtimes = runtimes;
        return runtimes;
      }),
    );
    if (lists.every((list) => list === undefined)) throw this.#noEngine();
    return [...new Set(lists.flatMap((list) => list ?? []))];
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    // Bounded: an engine that hangs must not hold the shutdown.
    await Promise.race([
      Promise.allSettled(this.#engines.map((engine) => engine.checking)),
      sleep(this.#options.startTimeoutMs, undefined, { ref: false }),
    ]);
    await Promise.allSettled(this.#engines.map((engine) => engine.driver?.close()));
  }

  #release(engine: EngineState, spec: SandboxSpec): void {
    engine.containers -= 1;
    engine.placedMb -= spec.memoryMb;
  }

  async #sumOverUp(reap: (driver: EngineDriver) => Promise<number>): Promise<number> {
    const counts = await Promise.all(
      this.#engines.map((engine) =>
        engine.up && engine.driver !== undefined
          ? reap(engine.driver).catch(() => 0)
          : Promise.resolve(0),
      ),
    );
    return counts.reduce((sum, count) => sum + count, 0);
  }

  /** One check at a time per engine: an up engine must answer, a down one may rejoin. */
  #check(engine: EngineState): Promise<void> {
    engine.checking ??= this.#checkOnce(engine).finally(() => (engine.checking = undefined));
    return engine.checking;
  }

  async #checkOnce(engine: EngineState): Promise<void> {
    if (this.#closed) return;
    if (engine.up) {
      if (!(await this.#answers(engine))) this.#markDown(engine, 'it no longer answers');
      return;
    }
    try {
      engine.driver ??= await engine.source.open();
      await engine.driver.ping();
      const [{ memoryMb, cpus }, runtimes] = await Promise.all([
        engine.source.capacity(),
        engine.driver.runtimes(),
      ]);
      await engine.driver.reapLeftovers();
      if (this.#closed) return;
      Object.assign(engine, {
        memoryMb,
        cpus,
        runtimes,
        up: true,
        reportedDown: false,
        failedStarts: 0,
        pausedUntil: 0,
        ...lossSignal(),
      });
      this.#options.log('Docker engine joined', {
        engine: engine.name,
        memoryMb,
        cpus,
        runtimes,
      });
    } catch (error) {
      // Still down; the next check tries again.
      this.#reportDown(engine, error);
    }
  }

  async #answers(engine: EngineState): Promise<boolean> {
    if (engine.driver === undefined) return false;
    return engine.driver.ping().then(
      () => true,
      () => false,
    );
  }

  #markDown(engine: EngineState, reason: unknown): void {
    if (!engine.up) return;
    engine.up = false;
    engine.loseAll();
    this.#reportDown(engine, reason);
  }

  #reportDown(engine: EngineState, reason: unknown): void {
    if (engine.reportedDown) return;
    engine.reportedDown = true;
    this.#options.log('Docker engine down: new containers go to the others', {
      engine: engine.name,
      error: messageOf(reason),
    });
  }

  /** An engine that answers but failed a start: passed over for 1 s, 2 s, 4 s … up to a minute. */
  #pauseFailing(engine: EngineState, error: unknown): void {
    engine.failedStarts += 1;
    const pauseMs = Math.min(MAX_FAILING_PAUSE_MS, 1000 * 2 ** (engine.failedStarts - 1));
    engine.pausedUntil = Date.now() + pauseMs;
    this.#options.log('Docker engine failed a container start: passed over for a while', {
      engine: engine.name,
      pauseMs,
      error: messageOf(error),
    });
  }

  /**
   * Engine addresses are the operator's (internal hosts): named at start,
   * never in an error a call can carry back to a tenant (they are logged).
   */
  #noEngine(named = false): McphostError {
    const names = this.#engines.map((engine) => engine.name);
    return new McphostError(
      'ERR_SANDBOX_UNAVAILABLE',
      named ? `no Docker engine answers (${names.join(', ')})` : 'no Docker engine answers',
      named ? { details: { engines: names } } : undefined,
    );
  }
}

/** The instance, telling which engine runs it, and ended for its pool when that engine goes down. */
function withEngine(instance: SandboxInstance, engine: EngineState): SandboxInstance {
  let lost = false;
  const gone: Promise<SandboxExit> = engine.lost.then(() => {
    lost = true;
    // Asked after this exit is reported (a kill that answers at once must not
    // report its own); it finishes whenever the engine answers again.
    setImmediate(() => void instance.kill().catch(() => undefined));
    return {
      exitCode: null,
      oomKilled: false,
      stderrTail: 'its Docker engine stopped answering',
    };
  });
  return {
    id: instance.id,
    engine: engine.name,
    exited: Promise.race([instance.exited, gone]),
    write: (data) => {
      if (lost) throw new Error('its Docker engine stopped answering');
      instance.write(data);
    },
    onStdout: (listener) => instance.onStdout(listener),
    kill: () => (lost ? Promise.resolve() : instance.kill()),
  };
}

function lossSignal(): { lost: Promise<void>; loseAll: () => void } {
  let loseAll!: () => void;
  const lost = new Promise<void>((resolve) => (loseAll = resolve));
  return { lost, loseAll };
}

function messageOf(error: unknown): string {
  if (isMcphostError(error) || error instanceof Error) return error.message;
  return String(error);
}

/** DockerSandbox's refusal of a runtime the engine lacks (it names the runtime in its details). */
function isMissingRuntime(error: unknown): boolean {
  return (
    isMcphostError(error, 'ERR_SANDBOX_UNAVAILABLE') &&
    typeof (error.details as { runtime?: unknown } | undefined)?.runtime === 'string'
  );
}
