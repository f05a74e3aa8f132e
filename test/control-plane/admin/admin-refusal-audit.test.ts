/**
 * Refusals on the admin side cannot flood the audit log, and wrong bearers
 * cannot be guessed at speed — through a real control plane, with the rows
 * counted in the real store (SQLite, then PostgreSQL):
 *
 * - a viewer sending hundreds of requests its role forbids (403) and
 *   cookie writes without their CSRF token (403) leaves one row per kind of
 *   refusal a minute, whose `summary.count` says how many it stands for;
 *   naming a new server in each request opens at most a bounded number;
 * - wrong admin tokens, personal tokens and metrics tokens from one client
 *   network are answered 401 for SIGN_IN_ATTEMPTS_PER_MINUTE of them, then
 *   429 with Retry-After (the right token too, from that network), each
 *   audited once a minute with its count; the right tokens from another
 *   network work throughout.
 *
 * Networks are told apart as behind a reverse proxy: TRUSTED_PROXIES is the
 * loopback address and each request names its client in X-Forwarded-For.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgresServer, postgresUrl } from '../../store/store-targets.js';
import { adminRequest, type AdminAnswer } from '../../support/admin-requests.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import {
  startTestControlPlane,
  TEST_ADMIN_TOKEN,
  type TestControlPlane,
} from '../../support/control-plane.js';

const PASSWORD = 'correct horse battery staple';
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
/** Failed credentials one network may send a minute here. */
const ALLOWANCE = 5;
/** The guessing network, the people's networks. */
const ATTACKER = '198.51.100.7';
const OWNER_DESK = '203.0.113.20';
const VIEWER_DESK = '203.0.113.30';

interface Backend {
  name: string;
  env(): Promise<Record<string, string>>;
  /** Rows of the audit log as the store holds them (action, outcome, actor label, summary). */
  rows(plane: TestControlPlane): Promise<StoredRow[]>;
  teardown(): Promise<void>;
}

interface StoredRow {
  action: string;
  outcome: string;
  actor_label: string;
  server: string | null;
  summary: string;
}

const SELECT_ROWS = 'SELECT action, outcome, actor_label, server, summary FROM audit_log';

const sqlite: Backend = {
  name: 'SQLite',
  env: async () => ({}),
  rows: async (plane) => {
    const database = new SqliteDatabase(path.join(plane.dataDir, 'mcphost.db'), {
      readonly: true,
    });
    try {
      return database.prepare(SELECT_ROWS).all() as StoredRow[];
    } finally {
      database.close();
    }
  },
  teardown: async () => undefined,
};

function postgres(): Backend {
  const database = `mcphost_refusals_${randomBytes(6).toString('hex')}`;
  return {
    name: 'PostgreSQL',
    env: async () => {
      await onPostgresServer(`CREATE DATABASE ${database}`);
      return { DATABASE_URL: postgresUrl(database) };
    },
    rows: async () => {
      const client = new pg.Client({ connectionString: postgresUrl(database) });
      await client.connect();
      try {
        return (await client.query<StoredRow>(SELECT_ROWS)).rows;
      } finally {
        await client.end();
      }
    },
    teardown: () => onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`),
  };
}

/** How many refusals a stored row stands for. */
const countOf = (row: StoredRow) => (JSON.parse(row.summary) as { count?: number }).count ?? 1;
const sum = (numbers: number[]) => numbers.reduce((total, value) => total + value, 0);

describe.each([sqlite, postgres()])('refusals on the admin side ($name)', (backend) => {
  let plane: TestControlPlane;
  let viewerToken: string;
  let viewerSession: { cookie: string; csrf: string };

  /** A request from `network` (through the trusted proxy). */
  const from = (
    network: string,
    method: string,
    requestPath: string,
    options: Parameters<typeof adminRequest>[3] = {},
  ): Promise<AdminAnswer> =>
    adminRequest(plane.adminUrl, method, requestPath, {
      ...options,
      headers: { ...options.headers, 'x-forwarded-for': network },
    });

  /** GET /metrics from `network` with `bearer`: the status, and the error body when refused. */
  const scrape = async (network: string, bearer: string): Promise<AdminAnswer> => {
    const response = await loopbackFetch(`${plane.adminUrl}/metrics`, {
      headers: { authorization: `Bearer ${bearer}`, 'x-forwarded-for': network },
    });
    const text = await response.text();
    const body = response.ok ? undefined : JSON.parse(text);
    return { status: response.status, body, headers: response.headers };
  };

  beforeAll(async () => {
    plane = await startTestControlPlane({
      ...(await backend.env()),
      GENERIC_POOL_SIZE: '0',
      POOL_MIN_WARM: '0',
      TRUSTED_PROXIES: '127.0.0.1',
      SIGN_IN_ATTEMPTS_PER_MINUTE: String(ALLOWANCE),
      METRICS_TOKEN,
    });
    expect((await plane.admin('POST', '/api/servers', { subdomain: 'target' })).status).toBe(201);
    const created = await plane.admin('POST', '/api/accounts', {
      email: 'viewer@example.test',
      role: 'viewer',
      password: PASSWORD,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const signedIn = await from(VIEWER_DESK, 'POST', '/api/auth/password', {
      body: { email: 'viewer@example.test', password: PASSWORD },
    });
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    viewerSession = {
      cookie: signedIn.headers.getSetCookie()[0]!.split(';')[0]!,
      csrf: signedIn.body.csrfToken,
    };
    const minted = await from(VIEWER_DESK, 'POST', '/api/me/tokens', {
      ...viewerSession,
      body: { label: 'viewer script' },
    });
    expect(minted.status, JSON.stringify(minted.body)).toBe(201);
    viewerToken = minted.body.token;
  }, 180_000);

  afterAll(async () => {
    await plane?.close();
    await backend.teardown();
  });

  it('keeps one row per kind of refusal a minute for a viewer’s flood of 403s, with its count', async () => {
    const forbidden = 300;
    const withoutCsrf = 100;
    const started = performance.now();
    for (let batch = 0; batch < forbidden; batch += 20) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          from(VIEWER_DESK, 'PUT', `/api/servers/target/tools/t${batch + index}`, {
            bearer: viewerToken,
            body: { description: 'x', code: 'return 1;' },
          }),
        ),
      );
      for (const answer of answers) expect(answer.body.error.code).toBe('ERR_FORBIDDEN');
    }
    for (let batch = 0; batch < withoutCsrf; batch += 20) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          from(VIEWER_DESK, 'POST', '/api/me/tokens', {
            cookie: viewerSession.cookie,
            body: { label: 'no csrf' },
          }),
        ),
      );
      for (const answer of answers) expect(answer.body.error.code).toBe('ERR_CSRF');
    }
    const seconds = (performance.now() - started) / 1000;
    // Counts are written when their minute ends, or when the control plane stops.
    await plane.restart();
    const rows = (await backend.rows(plane)).filter(
      (row) => row.actor_label === 'viewer@example.test' && row.outcome === 'denied',
    );
    console.log(
      `[${backend.name}] viewer: ${forbidden + withoutCsrf} refusals in ${seconds.toFixed(2)} s → ${rows.length} audit rows`,
    );
    expect(rows.map((row) => [row.action, countOf(row)]).sort()).toEqual(
      [
        ['personal-token.create', withoutCsrf],
        ['tool.save', forbidden],
      ].sort(),
    );
    // The API lists the same rows, count included.
    const listed = await plane.admin(
      'GET',
      '/api/audit?actor=viewer@example.test&outcome=denied&action=tool.save',
    );
    expect(listed.body.entries).toHaveLength(1);
    expect(listed.body.entries[0]).toMatchObject({
      server: 'target',
      summary: { count: forbidden, note: expect.stringMatching(/viewer role may not/) },
    });
  });

  it('bounds the rows of a viewer naming a new server in each refused request', async () => {
    const refusals = 200;
    for (let batch = 0; batch < refusals; batch += 20) {
      await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          from(VIEWER_DESK, 'DELETE', `/api/servers/made-up-${batch + index}`, {
            bearer: viewerToken,
          }),
        ),
      );
    }
    await plane.restart();
    const rows = (await backend.rows(plane)).filter(
      (row) => row.actor_label === 'viewer@example.test' && row.action === 'server.delete',
    );
    console.log(
      `[${backend.name}] viewer: ${refusals} refusals on new servers → ${rows.length} rows`,
    );
    // 64 kinds a minute each on its own entry, one more entry for the rest.
    expect(rows.length).toBeLessThanOrEqual(65);
    expect(sum(rows.map(countOf))).toBe(refusals);
  });

  it('throttles and audits wrong bearers per network; the right ones work from elsewhere', async () => {
    const guesses = [
      () => `mcph_${randomBytes(32).toString('base64url')}`,
      () => `mcph_pat_${randomBytes(32).toString('base64url')}`,
    ];
    const statuses: number[] = [];
    const answers: AdminAnswer[] = [];
    const started = performance.now();
    // Ten at once until the allowance is spent, then fifty at once: refused answers are held
    // back a second each, so larger batches keep the test short.
    for (const size of [10, 50, 50, 50, 50, 50, 40]) {
      const round = await Promise.all(
        Array.from({ length: size }, (_, index) =>
          index % 3 === 2
            ? scrape(ATTACKER, guesses[0]!())
            : from(ATTACKER, 'GET', '/api/servers', { bearer: guesses[index % 2]!() }),
        ),
      );
      answers.push(...round);
      statuses.push(...round.map((answer) => answer.status));
      // The owner and the metrics scraper keep working from their own network.
      expect(
        (await from(OWNER_DESK, 'GET', '/api/servers', { bearer: TEST_ADMIN_TOKEN })).status,
      ).toBe(200);
      expect((await scrape(OWNER_DESK, METRICS_TOKEN)).status).toBe(200);
    }
    const seconds = (performance.now() - started) / 1000;
    const unauthorized = statuses.filter((status) => status === 401).length;
    const throttled = answers.filter((answer) => answer.status === 429);
    console.log(
      `[${backend.name}] attacker: ${statuses.length} wrong bearers in ${seconds.toFixed(2)} s → ${unauthorized} checked (401), ${throttled.length} refused unchecked (429)`,
    );
    expect(unauthorized).toBeGreaterThanOrEqual(ALLOWANCE);
    // Guesses already in flight when the allowance ran out may still be checked.
    expect(unauthorized).toBeLessThanOrEqual(ALLOWANCE + 10);
    expect(unauthorized + throttled.length).toBe(statuses.length);
    // Held back: a guesser waiting for its answers gets at most one per connection a second.
    expect(seconds).toBeGreaterThanOrEqual(6);
    for (const answer of throttled) {
      expect(answer.body.error.code).toBe('ERR_SIGN_IN_THROTTLED');
      const retryAfter = Number(answer.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
    }
    // From the guessing network, even the right token waits: otherwise 429 vs 200 would answer guesses.
    expect((await from(ATTACKER, 'GET', '/api/servers', { bearer: TEST_ADMIN_TOKEN })).status).toBe(
      429,
    );
    // A request without credentials is not a guess: answered as ever.
    expect((await from(ATTACKER, 'GET', '/api/servers')).status).toBe(401);

    await plane.restart();
    const rows = (await backend.rows(plane)).filter((row) => row.action === 'sign-in.token');
    expect(rows.every((row) => row.actor_label === ATTACKER && row.outcome === 'failed')).toBe(
      true,
    );
    // One row for the wrong bearers, one for those refused unchecked: each with its count.
    expect(rows.length).toBeLessThanOrEqual(2);
    expect(sum(rows.map(countOf))).toBe(statuses.length + 1);
  });
});
