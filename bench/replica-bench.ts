/**
 * What sharing sessions among replicas costs a call. Two control planes in
 * this process on one image: one on the embedded store (sessions in memory,
 * one replica) and two on one PostgreSQL database (sessions in the store,
 * any replica serves any request). Measured in rounds that alternate between
 * them, so drift of the machine falls on both alike:
 * - warm `tools/call` p50 of a session the replica holds (cache hit), beside
 *   the single-replica figure — the difference is what sharing costs a call;
 * - the first request of a session on a replica that has not seen it (read
 *   from the store and rebuilt there), for each of SESSIONS sessions.
 */
import { randomBytes } from 'node:crypto';
import { readSetting } from '../control-plane/config.js';
import { ensureRunnerImage } from '../control-plane/image-build/ensure-runner-image.js';
import { startTestControlPlane, type TestControlPlane } from '../test/support/control-plane.js';
import { onPostgresServer, postgresUrl } from '../test/store/store-targets.js';
import { RawMcpSession } from './raw-mcp-session.js';
import { percentile } from './stats.js';

const ROUNDS = 10;
const CALLS_PER_ROUND = 200;
const WARM_UP = 100;
const SESSIONS = 50;

export interface ReplicaBenchFigures {
  singleP50Ms: number;
  sharedP50Ms: number;
  /** sharedP50Ms − singleP50Ms (target ≤ 0.2 ms). */
  deltaP50Ms: number;
  /** First request of a session on a replica that had not seen it. */
  restoreP50Ms: number;
  /** A later request of the same sessions there. */
  afterRestoreP50Ms: number;
}

async function plane(image: string, extra: Record<string, string>): Promise<TestControlPlane> {
  const started = await startTestControlPlane({
    RUNNER_IMAGE: image,
    GENERIC_POOL_SIZE: '1',
    POOL_MIN_WARM: '1',
    RATE_LIMIT_PER_MINUTE: '0',
    ...extra,
  });
  await started.admin('POST', '/api/servers', { subdomain: 'bench' });
  return started;
}

function sessionOn(target: TestControlPlane): RawMcpSession {
  return new RawMcpSession(`http://127.0.0.1:${target.port}/mcp`, `bench.localhost:${target.port}`);
}

async function calls(session: RawMcpSession, count: number, into?: number[]): Promise<void> {
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await session.call('trivial');
    into?.push(performance.now() - start);
  }
}

export async function runReplicaBench(
  report: (line: string) => void,
): Promise<ReplicaBenchFigures> {
  const image =
    process.env.MCPHOST_BENCH_RUNNER_IMAGE ??
    process.env.MCPHOST_TEST_RUNNER_IMAGE ??
    (await ensureRunnerImage({ base: readSetting('runnerBase') }));
  const database = `mcphost_bench_${randomBytes(6).toString('hex')}`;
  await onPostgresServer(`CREATE DATABASE ${database}`);
  const planes: TestControlPlane[] = [];
  try {
    const single = await plane(image, {});
    planes.push(single);
    const sharedA = await plane(image, { DATABASE_URL: postgresUrl(database) });
    planes.push(sharedA);
    // The second replica finds the server the first created in the shared database.
    const sharedB = await startTestControlPlane({
      RUNNER_IMAGE: image,
      GENERIC_POOL_SIZE: '1',
      POOL_MIN_WARM: '1',
      RATE_LIMIT_PER_MINUTE: '0',
      DATABASE_URL: postgresUrl(database),
    });
    planes.push(sharedB);
    for (const target of [single, sharedA]) {
      const saved = await target.admin('PUT', '/api/servers/bench/tools/trivial', {
        description: 'bench',
        code: 'return 1;',
      });
      if (saved.status >= 300) throw new Error(`saving the tool: ${JSON.stringify(saved.body)}`);
    }
    const singleSession = sessionOn(single);
    const sharedSession = sessionOn(sharedA);
    await singleSession.open();
    await sharedSession.open();
    await calls(singleSession, WARM_UP);
    await calls(sharedSession, WARM_UP);
    const singleTimes: number[] = [];
    const sharedTimes: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      await calls(singleSession, CALLS_PER_ROUND, singleTimes);
      await calls(sharedSession, CALLS_PER_ROUND, sharedTimes);
    }

    // Sessions opened on A, then used on B: the first request reads and rebuilds each there.
    const restores: number[] = [];
    const afterRestores: number[] = [];
    // B's container warms on the shared session first, so only the session's rebuild is measured.
    const warmB = sessionOn(sharedB);
    warmB.adopt(sharedSession.id);
    await calls(warmB, 20);
    for (let i = 0; i < SESSIONS; i++) {
      const opened = sessionOn(sharedA);
      await opened.open();
      const elsewhere = sessionOn(sharedB);
      elsewhere.adopt(opened.id);
      await calls(elsewhere, 1, restores);
      await calls(elsewhere, 1, afterRestores);
    }

    const figures: ReplicaBenchFigures = {
      singleP50Ms: percentile(singleTimes, 50),
      sharedP50Ms: percentile(sharedTimes, 50),
      deltaP50Ms: percentile(sharedTimes, 50) - percentile(singleTimes, 50),
      restoreP50Ms: percentile(restores, 50),
      afterRestoreP50Ms: percentile(afterRestores, 50),
    };
    report(
      `warm tools/call p50: one replica (sessions in memory) ${figures.singleP50Ms.toFixed(3)} ms, replicas sharing sessions in PostgreSQL (cache hit) ${figures.sharedP50Ms.toFixed(3)} ms = ${figures.deltaP50Ms >= 0 ? '+' : ''}${figures.deltaP50Ms.toFixed(3)} ms (target ≤ +0.2 ms; ${ROUNDS} alternating rounds of ${CALLS_PER_ROUND})`,
    );
    report(
      `first request of a session on a replica that had not seen it (read and rebuilt): p50 ${figures.restoreP50Ms.toFixed(2)} ms; the next one ${figures.afterRestoreP50Ms.toFixed(2)} ms (${SESSIONS} sessions)`,
    );
    return figures;
  } finally {
    await Promise.all(planes.map((p) => p.close()));
    await onPostgresServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  }
}
