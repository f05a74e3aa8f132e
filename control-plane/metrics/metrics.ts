/**
 * Prometheus metrics (prom-client), one registry per control plane. Parts of
 * the service record through the small methods here, so metric names and
 * labels live in one file. Pool figures are read from the pools when scraped,
 * not kept twice.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** What the pools report (a subset of PoolStats). */
export interface PoolFigures {
  poolKey: string;
  warm: number;
  busy: number;
  warming: number;
  queued: number;
  started: number;
  retired: Partial<Record<string, number>>;
}

/** One sample of a gauge: its labels and value. */
type Sample = [labels: Record<string, string>, value: number];

/** What the engines report (a subset of EngineStats). */
export interface EngineFigures {
  name: string;
  up: boolean;
  containers: number;
}

const DURATION_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

export class Metrics {
  readonly registry = new Registry();
  readonly #invocations = new Counter({
    name: 'mcphost_invocations_total',
    help: 'Code runs by server, name, outcome (ok or the error code) and kind (tool, prompt, resource, completion)',
    labelNames: ['server', 'tool', 'outcome', 'kind'] as const,
    registers: [this.registry],
  });
  readonly #invocationSeconds = new Histogram({
    name: 'mcphost_invocation_duration_seconds',
    help: 'Time a code run (tool, prompt, resource or completion) ran in its container',
    labelNames: ['server', 'tool', 'kind'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly #queueSeconds = new Histogram({
    name: 'mcphost_invocation_queue_seconds',
    help: 'Time an invocation waited for a container',
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly #brokerRequests = new Counter({
    name: 'mcphost_broker_requests_total',
    help: 'sdk.http / sdk.db requests by operation and outcome (ok or the error code, e.g. ERR_EGRESS_DENIED)',
    labelNames: ['operation', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly #authFailures = new Counter({
    name: 'mcphost_auth_failures_total',
    help: 'Requests refused for their credentials, by side (admin or hosted) and reason (e.g. missing_token, invalid_admin_token, throttled)',
    labelNames: ['side', 'reason'] as const,
    registers: [this.registry],
  });
  readonly #httpRequests = new Counter({
    name: 'mcphost_http_requests_total',
    help: 'HTTP requests by side (admin or hosted), route (a pattern such as "GET /api/servers/:sub", never a raw path) and status',
    labelNames: ['side', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly #mcpRefused = new Counter({
    name: 'mcphost_mcp_refused_total',
    help: 'Requests to /mcp refused by server and reason (origin, rate, session_quota, session_capacity)',
    labelNames: ['server', 'reason'] as const,
    registers: [this.registry],
  });
  readonly #refusals = new Counter({
    name: 'mcphost_refusals_total',
    help: 'Calls refused before any code ran, by server and error code, as the invocation log counts them instead of logging a row (GET /api/invocations/refusals); requests refused for their origin or rate also count in mcphost_mcp_refused_total, and calls that found no container in mcphost_invocations_total',
    labelNames: ['server', 'code'] as const,
    registers: [this.registry],
  });
  readonly #sessionEvictions = new Counter({
    name: 'mcphost_mcp_session_evictions_total',
    help: 'Idle MCP sessions closed to make room for a new session of the same server',
    labelNames: ['server'] as const,
    registers: [this.registry],
  });
  readonly #httpSeconds = new Histogram({
    name: 'mcphost_http_request_duration_seconds',
    help: 'HTTP request duration by side and route (as in mcphost_http_requests_total)',
    labelNames: ['side', 'route'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly #containerStarts = new Counter({
    name: 'mcphost_container_starts_total',
    help: 'Container starts by server ("" = the generic pool)',
    labelNames: ['server'] as const,
    registers: [this.registry],
  });
  readonly #containerEvictions = new Counter({
    name: 'mcphost_container_evictions_total',
    help: "Idle containers evicted to make room for another server's lease, by the server evicted",
    labelNames: ['server'] as const,
    registers: [this.registry],
  });
  readonly #leaseWaitSeconds = new Histogram({
    name: 'mcphost_lease_wait_seconds',
    help: 'Time a lease waited for a container, by server (0 when one was warm)',
    labelNames: ['server'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  /** `pools` and `engines` (DOCKER_ENGINES; none otherwise) are read at every scrape. */
  constructor(
    pools: () => readonly PoolFigures[],
    engines: () => readonly EngineFigures[] = () => [],
  ) {
    collectDefaultMetrics({ register: this.registry, prefix: 'mcphost_process_' });
    this.#scrapedGauge(
      'mcphost_engine_up',
      'Docker engines of DOCKER_ENGINES: 1 while it answers and takes new containers, 0 while it is passed over',
      ['engine'],
      () => engines().map((engine) => [{ engine: engine.name }, engine.up ? 1 : 0]),
    );
    this.#scrapedGauge(
      'mcphost_engine_containers',
      'Runner containers this control plane placed on each Docker engine of DOCKER_ENGINES',
      ['engine'],
      () => engines().map((engine) => [{ engine: engine.name }, engine.containers]),
    );
    this.#scrapedGauge(
      'mcphost_pool_containers',
      'Containers per pool by state (warm, busy, warming), and callers waiting for one (state "queued")',
      ['pool', 'state'],
      () =>
        pools().flatMap((pool) =>
          (['warm', 'busy', 'warming', 'queued'] as const).map((state): Sample => [
            { pool: pool.poolKey, state },
            pool[state],
          ]),
        ),
    );
    // Cumulative since the pool was created; a gauge because the pools own the count.
    this.#scrapedGauge(
      'mcphost_pool_container_starts',
      'Containers started per pool since it was created',
      ['pool'],
      () => pools().map((pool) => [{ pool: pool.poolKey }, pool.started]),
    );
    this.#scrapedGauge(
      'mcphost_container_retirements',
      'Containers retired per pool and reason since the pool was created',
      ['pool', 'reason'],
      () =>
        pools().flatMap((pool) =>
          Object.entries(pool.retired).map(([reason, count]): Sample => [
            { pool: pool.poolKey, reason },
            count ?? 0,
          ]),
        ),
    );
  }

  /**
   * The modern era's long-lived requests, read at every scrape: calls parked
   * waiting for client input, and open `subscriptions/listen` streams, per server.
   */
  watchModernEra(
    parked: () => ReadonlyMap<string, number>,
    listening: () => ReadonlyMap<string, number>,
  ): void {
    this.#scrapedGauge(
      'mcphost_mcp_parked_calls',
      'Modern-era calls waiting for their client input (input_required) on this replica, per server',
      ['server'],
      () => [...parked()].map(([server, count]): Sample => [{ server }, count]),
    );
    this.#scrapedGauge(
      'mcphost_mcp_listen_streams',
      'Open subscriptions/listen streams on this replica, per server',
      ['server'],
      () => [...listening()].map(([server, count]): Sample => [{ server }, count]),
    );
  }

  /** A gauge whose samples are read afresh at every scrape (what the pools and engines own). */
  #scrapedGauge(
    name: string,
    help: string,
    labelNames: readonly string[],
    samples: () => readonly Sample[],
  ): void {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [labels, value] of samples()) this.set(labels, value);
      },
    });
  }

  /** One finished invocation. */
  invocation(
    server: string,
    tool: string,
    kind: string,
    outcome: string,
    durationMs: number,
    queueMs: number,
  ): void {
    this.#invocations.inc({ server, tool, outcome, kind });
    this.#invocationSeconds.observe({ server, tool, kind }, durationMs / 1000);
    this.#queueSeconds.observe(queueMs / 1000);
  }

  /** Receivers of the warm pools' scheduler events. */
  sandboxEvents(): {
    containerStarted(server: string | undefined): void;
    containerEvicted(server: string | undefined): void;
    leaseWaited(server: string, waitMs: number): void;
  } {
    return {
      containerStarted: (server) => this.#containerStarts.inc({ server: server ?? '' }),
      containerEvicted: (server) => this.#containerEvictions.inc({ server: server ?? '' }),
      leaseWaited: (server, waitMs) => this.#leaseWaitSeconds.observe({ server }, waitMs / 1000),
    };
  }

  /** One brokered request. */
  brokerRequest(operation: string, outcome: string): void {
    this.#brokerRequests.inc({ operation, outcome });
  }

  /** One refused request (`side`: admin or hosted; `reason`: e.g. invalid_token). */
  authFailure(side: 'admin' | 'hosted', reason: string): void {
    this.#authFailures.inc({ side, reason });
  }

  /** One answered HTTP request. */
  httpRequest(side: string, route: string, status: number, seconds: number): void {
    this.#httpRequests.inc({ side, route, status: String(status) });
    this.#httpSeconds.observe({ side, route }, seconds);
  }

  /** One request to `/mcp` refused before it reached a session (`reason`: origin, rate, session_quota, session_capacity). */
  mcpRefused(server: string, reason: string): void {
    this.#mcpRefused.inc({ server, reason });
  }

  /** One call refused before any code ran (`code`: a registry code, never the caller's text). */
  refusal(server: string, code: string): void {
    this.#refusals.inc({ server, code });
  }

  /** One idle session closed to make room for another of the same server. */
  sessionEvicted(server: string): void {
    this.#sessionEvictions.inc({ server });
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
