/**
 * A sandbox driver over several Docker engines (DOCKER_ENGINES): each engine
 * has a driver of its own (a DockerSandbox with its runner image), and every
 * new container is placed by free capacity (engine-placement.ts). Pools need
 * no change: a container lost with its engine exits like any other, its pool
 * starts a replacement, and the replacement lands on an engine that answers.
 *
 * An engine is *down* from the moment it stops answering (a start that fails
 * and a ping that fails after it, or the periodic check) until it answers
 * again; then it rejoins: it is opened anew if it never was (its runner image
 * built or found there), and its leftovers are reaped. The driver answers
 * `ping` while at least one engine is up, so readiness holds as long as one
 * engine serves.
 */
import { McphostError, isMcphostError } from '../../errors.js';
import type { SandboxDriver, SandboxInstance, SandboxSpec } from '../driver.js';
import { placementOrder, type EngineLoad } from './engine-placement.js';

/** The part of a per-engine driver this one uses (a DockerSandbox). */
export type EngineDriver = Omit<SandboxDriver, 'kind'>;

/** One engine as the composition root describes it. */
export interface EngineSource {
  /** Stable name, shown in /api/pools and metrics (the engine's address). */
  name: string;
  /** Prepares the engine (runner image) and returns its driver; rejects when it does not answer. */
  open(): Promise<EngineDriver>;
  /** The engine's memory in MiB (`docker info`). */
  memoryMb(): Promise<number>;
}

/** What /api/pools and metrics show of one engine. */
export interface EngineStats {
  name: string;
  up: boolean;
  containers: number;
  placedMb: number;
  memoryMb: number;
}

export interface MultiEngineSandboxOptions {
  engines: readonly EngineSource[];
  /** How often engines are checked (down ones for rejoining), in ms. */
  checkIntervalMs: number;
  /** Told when an engine goes down or rejoins. */
  log: (message: string, details: Record<string, unknown>) => void;
}

interface EngineState extends EngineLoad {
  source: EngineSource;
  driver?: EngineDriver;
  /** A join or check under way: never two at once for one engine. */
  checking?: Promise<void>;
  /** Its being down was logged: one line per outage, not one per check. */
  reportedDown: boolean;
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
      placedMb: 0,
      containers: 0,
      reportedDown: false,
    }));
  }

  /** Joins every engine that answers; fails only when none does. Then checks them periodically. */
  async open(): Promise<void> {
    await Promise.all(this.#engines.map((engine) => this.#check(engine)));
    if (!this.#engines.some((engine) => engine.up)) {
      throw noEngine(this.#engines.map((engine) => engine.name));
    }
    this.#timer = setInterval(() => {
      for (const engine of this.#engines) void this.#check(engine);
    }, this.#options.checkIntervalMs);
    this.#timer.unref();
  }

  /** Each engine's state and what we placed on it. */
  stats(): EngineStats[] {
    return this.#engines.map(({ name, up, containers, placedMb, memoryMb }) => ({
      name,
      up,
      containers,
      placedMb,
      memoryMb,
    }));
  }

  async start(spec: SandboxSpec): Promise<SandboxInstance> {
    const candidates = placementOrder(this.#engines, spec.memoryMb, spec.runtime);
    for (const candidate of candidates) {
      const engine = candidate as EngineState;
      if (!engine.up || engine.driver === undefined) continue;
      // Counted before the start: concurrent starts see each other's placement.
      engine.containers += 1;
      engine.placedMb += spec.memoryMb;
      let placed = false;
      try {
        const instance = await engine.driver.start(spec);
        placed = true;
        void instance.exited.then(() => this.#release(engine, spec));
        return withEngine(instance, engine.name);
      } catch (error) {
        // Only an engine that no longer answers is passed over; any other
        // failure (a bad spec, a missing runtime) is the call's own.
        if (await this.#answers(engine)) throw error;
        this.#markDown(engine, error);
      } finally {
        if (!placed) this.#release(engine, spec);
      }
    }
    // Every engine that could take it is down (or went down under this start).
    throw noEngine(this.#engines.map((engine) => engine.name));
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
    if (!answers.some(Boolean)) throw noEngine(this.#engines.map((engine) => engine.name));
  }

  /** Runtimes of any engine that is up: a server may ask for one some engine has. */
  async runtimes(): Promise<string[]> {
    const known = this.#engines.filter((engine) => engine.up).flatMap((e) => e.runtimes ?? []);
    if (known.length === 0) await this.ping();
    return [...new Set(known)];
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await Promise.allSettled(this.#engines.map((engine) => engine.checking));
    await Promise.all(this.#engines.map((engine) => engine.driver?.close()));
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
      const [memoryMb, runtimes] = await Promise.all([
        engine.source.memoryMb(),
        engine.driver.runtimes(),
      ]);
      await engine.driver.reapLeftovers();
      if (this.#closed) return;
      Object.assign(engine, { memoryMb, runtimes, up: true, reportedDown: false });
      this.#options.log('Docker engine joined', { engine: engine.name, memoryMb, runtimes });
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
}

/** The instance, telling which engine runs it. */
function withEngine(instance: SandboxInstance, engine: string): SandboxInstance {
  return {
    id: instance.id,
    engine,
    exited: instance.exited,
    write: (data) => instance.write(data),
    onStdout: (listener) => instance.onStdout(listener),
    kill: () => instance.kill(),
  };
}

function noEngine(names: readonly string[]): McphostError {
  return new McphostError(
    'ERR_SANDBOX_UNAVAILABLE',
    `no Docker engine answers (${names.join(', ')})`,
    { details: { engines: names } },
  );
}

function messageOf(error: unknown): string {
  if (isMcphostError(error) || error instanceof Error) return error.message;
  return String(error);
}
