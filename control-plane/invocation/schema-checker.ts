/**
 * Tool schemas checked off the control plane's thread, each check under a
 * deadline. Validation can be exponential in the value checked (a 200-byte
 * schema over 30 levels of nesting takes a minute) and `uniqueItems` over
 * objects is quadratic; such schemas are refused at save where they can be
 * recognised (store/tool-schema-cost.ts), but a store may hold schemas saved
 * before, and some cannot be read that far. So values are checked in worker
 * threads (schema-check-worker.ts), and a check still running at the
 * deadline fails as "could not be checked": its worker is replaced.
 *
 * Two lanes, one worker each (schema-check-lane.ts): a check goes to the
 * *light* lane when its cost is known to be small — a schema whose work at
 * each place of a value is bounded and known (its weight), small enough to
 * compile in milliseconds, and a value small enough that weight × size stays
 * within LIGHT_CHECK_BUDGET — and to the *heavy* lane otherwise. A server
 * whose check overran checks in the heavy lane for OVERRUN_BINDING_MS. So
 * however many servers send checks that run to the deadline, they share one
 * worker (and one CPU) among themselves, and the light lane's checks take
 * milliseconds at most. In each lane a free worker takes the check of the
 * server that has used the least worker time lately (schema-check-usage.ts):
 * a server that checks now and then waits for the check running when its
 * own came, never for the queues of the servers that flood the lane, however
 * many they are. Each check's deadline counts its own run only, never its
 * wait (nor a worker's loading: the heavy lane keeps a loaded spare).
 *
 * Why not check small values on the control plane's thread? A warm check
 * there is 0.25 µs, against a 35–70 µs round trip to a worker (measured);
 * but its first check compiles the schema (2–40 ms), and no reading of a
 * schema bounds its time exactly (the weight is an estimate, and so is a
 * pattern's cost per character): on this thread, a compile or a wrong
 * estimate stalls every server, with no deadline to end it. The round trip
 * is small against a call's milliseconds.
 */
import { jsonBytesAtMost } from '../json-size.js';
import { schemaCost, type SchemaCost, type ToolJsonSchema } from '../store/index.js';
import { SchemaCheckLane, unchecked, type LaneRecord } from './schema-check-lane.js';
import { ServerUsage } from './schema-check-usage.js';
import type { SchemaCheck, SchemaRole, SchemaSubject } from './tool-schemas.js';

/** Workers of the light lane and of the heavy lane (see above). */
export const SCHEMA_CHECK_LANE_WORKERS = { light: 1, heavy: 1 } as const;
/**
 * Loaded workers kept beside each lane's own once it has had an overrun:
 * the heavy lane's overruns are its usual business, and a check waiting
 * there should wait for the check before it, not for a worker to load. The
 * light lane overruns only when a schema's cost was misjudged, once per
 * server (it is then moved to the heavy lane).
 */
const SCHEMA_CHECK_LANE_SPARES = { light: 0, heavy: 1 } as const;
/** Worker threads in all: each is a thread of CPU, and the machine is shared with the containers. */
export const SCHEMA_CHECK_WORKERS =
  SCHEMA_CHECK_LANE_WORKERS.light + SCHEMA_CHECK_LANE_WORKERS.heavy;

/**
 * How long a server whose check overran checks in the heavy lane, in ms:
 * what made one check overrun likely makes its next ones overrun too, and
 * in the light lane each would take its worker down (and every server's
 * compiled schemas with it) for everyone else.
 */
export const OVERRUN_BINDING_MS = 60_000;

/**
 * Largest schema (JSON text, in characters) checked in the light lane: its
 * compile, once per tool version in a worker, takes 2–40 ms (measured on a
 * loaded 2-core machine; most tool schemas are well under 1 KB). Larger ones
 * compile in up to 100 ms (TOOL_SCHEMA_MAX_CODE_CHARACTERS), in the heavy lane.
 */
export const LIGHT_SCHEMA_CHARACTERS = 4_096;
/**
 * Most work of a light check: the schema's weight (its work at one place of
 * a value) times the value's size as JSON, in bytes. 2^18: at the 2–30 ns a
 * unit costs (measured; patterns the most), at most a few milliseconds;
 * e.g. a value of 80 KB against a schema of weight 3.
 */
export const LIGHT_CHECK_BUDGET = 262_144;
/** Steps the light lane's reading of a schema may take (store's schemaCost; ~20 ms at most, once per schema). */
const LIGHT_COST_MAX_WORK = 20_000;

export type SchemaCheckLaneName = keyof typeof SCHEMA_CHECK_LANE_WORKERS;

/** How one check went, for metrics and tests. */
export interface SchemaCheckRecord extends LaneRecord {
  readonly lane: SchemaCheckLaneName;
}

/** What a {@link SchemaChecker} is configured with (TOOL_SCHEMA_CHECK_TIMEOUT_MS). */
export interface SchemaCheckSettings {
  /** Longest one check may run in its worker, compiling the schema included, in ms. */
  timeoutMs: number;
  /** Told how each check went through its lane (for metrics and tests); nothing by default. */
  onCheck?: (record: SchemaCheckRecord) => void;
}

/** What the checker needs of a tool: where it lives, its version, its schemas. */
export interface SchemaBearingTool {
  readonly subdomain: string;
  readonly name: string;
  readonly version: number;
  readonly inputSchema?: ToolJsonSchema;
  readonly outputSchema?: ToolJsonSchema;
}

/** A schema as the checker sends it: its text, and what checking against it may cost. */
interface KnownSchema {
  readonly text: string;
  /** Undefined when the schema is too large for the light lane (never read). */
  readonly cost?: SchemaCost;
}

export class SchemaChecker {
  readonly #lanes: Record<SchemaCheckLaneName, SchemaCheckLane>;
  /** Servers whose check overran, and until when they check in the heavy lane. */
  readonly #demoted = new Map<string, number>();
  /** Schema objects already seen (records are frozen and replaced on change). */
  readonly #schemas = new WeakMap<ToolJsonSchema, KnownSchema>();
  #nextId = 1;
  #closed = false;

  /** `settings.timeoutMs` must be a positive integer (a TypeError otherwise). */
  constructor(settings: SchemaCheckSettings) {
    if (!Number.isInteger(settings?.timeoutMs) || settings.timeoutMs < 1) {
      throw new TypeError(
        `SchemaChecker: timeoutMs must be a positive integer, got ${settings?.timeoutMs}`,
      );
    }
    const usage = new ServerUsage();
    const lane = (name: SchemaCheckLaneName) =>
      new SchemaCheckLane({
        workers: SCHEMA_CHECK_LANE_WORKERS[name],
        spares: SCHEMA_CHECK_LANE_SPARES[name],
        timeoutMs: settings.timeoutMs,
        usage,
        onOverrun: (server) => this.#demoted.set(server, Date.now() + OVERRUN_BINDING_MS),
        onRecord: settings.onCheck && ((record) => settings.onCheck!({ ...record, lane: name })),
      });
    this.#lanes = { light: lane('light'), heavy: lane('heavy') };
  }

  /** Workers loaded and taking checks now, in both lanes (each lane starts on its first check). */
  get readyWorkers(): number {
    return this.#lanes.light.readyWorkers + this.#lanes.heavy.readyWorkers;
  }

  /** Checks `value` against the tool's schema in `role`; a tool without one passes. */
  check(tool: SchemaBearingTool, role: SchemaRole, value: unknown): Promise<SchemaCheck> {
    const schema = tool[role];
    if (schema === undefined) return Promise.resolve({ ok: true });
    if (this.#closed) return Promise.resolve(unchecked('the control plane is shutting down'));
    const known = this.#known(schema);
    const subject: SchemaSubject = {
      server: tool.subdomain,
      tool: tool.name,
      version: tool.version,
      role,
      schemaText: known.text,
    };
    const lane = this.#laneFor(subject.server, known, value);
    return this.#lanes[lane].check({ id: this.#nextId++, subject, value });
  }

  /** Answers waiting checks as unchecked and stops the workers. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([this.#lanes.light.close(), this.#lanes.heavy.close()]);
  }

  #laneFor(server: string, schema: KnownSchema, value: unknown): SchemaCheckLaneName {
    const until = this.#demoted.get(server);
    if (until !== undefined) {
      if (until > Date.now()) return 'heavy';
      this.#demoted.delete(server);
    }
    if (schema.cost?.kind !== 'bounded') return 'heavy';
    const maxBytes = Math.floor(LIGHT_CHECK_BUDGET / Math.max(1, schema.cost.weight));
    return jsonBytesAtMost(value, maxBytes) <= maxBytes ? 'light' : 'heavy';
  }

  #known(schema: ToolJsonSchema): KnownSchema {
    let known = this.#schemas.get(schema);
    if (known === undefined) {
      const text = JSON.stringify(schema);
      known =
        text.length > LIGHT_SCHEMA_CHARACTERS
          ? { text }
          : { text, cost: schemaCost(schema, LIGHT_COST_MAX_WORK) };
      this.#schemas.set(schema, known);
    }
    return known;
  }
}
