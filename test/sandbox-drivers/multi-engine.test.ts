/**
 * DOCKER_ENGINES against two real engines on this machine: the one every
 * test uses, never restarted, and a second one this test starts with its own
 * socket, data root and pid file (test/self-hosting/fixtures/second-engine.ts),
 * reached as a remote engine: over TCP on loopback with TLS, the engine
 * verifying the control plane's client certificate (openssl-made CA).
 * A real control plane builds its runner image on the second engine, spreads
 * containers over both, keeps answering while the second engine is stopped
 * (its pools refill on the first), and takes the second back when it answers
 * again. Skipped, saying why, without root or dockerd.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../support/loopback-server.js';
import { poolBudget } from '../../control-plane/app/pool-budget.js';
import Dockerode from 'dockerode';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../support/control-plane.js';
import { startSecondEngine, type SecondEngine } from '../self-hosting/fixtures/second-engine.js';

const run = promisify(execFile);
const missing =
  process.getuid?.() !== 0
    ? 'a second Docker engine needs root'
    : await run('sh', ['-c', 'command -v dockerd']).then(
        () => undefined,
        () => 'dockerd is not installed (.ci/run installs docker.io)',
      );

const FIRST = 'unix:///var/run/docker.sock';
let engine: SecondEngine | undefined;
let plane: TestControlPlane | undefined;
let second = '';
let certDir = '';

/**
 * A CA, a server certificate for 127.0.0.1 and a client certificate, in the
 * layout DOCKER_ENGINES' `?certs=` folder and dockerd's tls options expect.
 */
async function makeEngineCertificates(dir: string): Promise<void> {
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  await openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=mcphost-test-engines',
    '-keyout',
    'ca-key.pem',
    '-out',
    'ca.pem',
  );
  await writeFile(
    join(dir, 'server.ext'),
    'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n',
  );
  await writeFile(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const [name, subject] of [
    ['server', '/CN=127.0.0.1'],
    ['client', '/CN=mcphost'],
  ] as const) {
    const key = name === 'client' ? 'key.pem' : 'server-key.pem';
    const cert = name === 'client' ? 'cert.pem' : 'server-cert.pem';
    await openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      subject,
      '-keyout',
      key,
      '-out',
      `${name}.csr`,
    );
    await openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca-key.pem',
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
      '-out',
      cert,
    );
  }
}

interface EngineRow {
  name: string;
  up: boolean;
  containers: number;
}

async function engines(): Promise<EngineRow[]> {
  const answer = await plane!.admin('GET', '/api/pools');
  return answer.body.engines as EngineRow[];
}

/** Containers of every pool by engine, from /api/pools. */
async function containersByEngine(): Promise<Record<string, number>> {
  const answer = await plane!.admin('GET', '/api/pools');
  const totals: Record<string, number> = {};
  for (const pool of answer.body.pools as { engines?: Record<string, number> }[]) {
    for (const [name, count] of Object.entries(pool.engines ?? {})) {
      totals[name] = (totals[name] ?? 0) + count;
    }
  }
  return totals;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function call(server: string, a: number): Promise<unknown> {
  const answer = await plane!.admin('POST', `/api/servers/${server}/tools/add/invoke`, {
    params: { a, b: 1 },
  });
  return answer.body;
}

async function addServer(server: string, minWarm: number): Promise<void> {
  expect((await plane!.admin('POST', '/api/servers', { subdomain: server })).status).toBe(201);
  const tool = await plane!.admin('PUT', `/api/servers/${server}/tools/add`, {
    description: 'adds',
    inputSchema: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
    code: 'return params.a + params.b;',
  });
  expect(tool.status, JSON.stringify(tool.body)).toBe(201);
  const pool = await plane!.admin('PUT', `/api/pools/${server}`, { minWarm, maxSize: minWarm });
  expect(pool.status, JSON.stringify(pool.body)).toBe(200);
}

describe.skipIf(missing !== undefined)('DOCKER_ENGINES on two engines', () => {
  beforeAll(async () => {
    certDir = await mkdtemp(join(tmpdir(), 'mcphost-engine-tls-'));
    await makeEngineCertificates(certDir);
    const port = await freePort();
    engine = await startSecondEngine({
      extraHosts: [`tcp://127.0.0.1:${port}`],
      daemonConfig: {
        tls: true,
        tlsverify: true,
        tlscacert: join(certDir, 'ca.pem'),
        tlscert: join(certDir, 'server-cert.pem'),
        tlskey: join(certDir, 'server-key.pem'),
      },
    });
    second = `tcp://127.0.0.1:${port}`;
    plane = await startTestControlPlane({
      DOCKER_ENGINES: `${FIRST},${second}?certs=${certDir}`,
      DOCKER_ENGINE_CHECK_INTERVAL_MS: '300',
      // Each engine gets the runner image its own way: found on the first,
      // built offline on the second (nothing there, no registry).
      RUNNER_IMAGE: '',
      RUNNER_BASE: 'local',
    });
  }, 300_000);

  afterAll(async () => {
    await plane?.close();
    await engine?.stop();
    if (certDir !== '') await rm(certDir, { recursive: true, force: true });
  }, 120_000);

  it('is a remote engine that refuses a client without a certificate', async () => {
    const ca = await readFile(join(certDir, 'ca.pem'));
    const ping = (connect: Record<string, unknown>) =>
      undiciFetch(`https://${second.slice('tcp://'.length)}/_ping`, {
        dispatcher: new Agent({ connect }),
      }).then(
        (response) => response.status,
        (error: Error) => String(error.cause ?? error),
      );
    const [cert, key] = await Promise.all(
      ['cert.pem', 'key.pem'].map((file) => readFile(join(certDir, file))),
    );
    expect(await ping({ ca, cert, key })).toBe(200);
    // The server's certificate checks out, but the engine wants ours.
    expect(await ping({ ca })).not.toBe(200);
  });

  it('builds the runner image on each engine and spreads containers over both', async () => {
    expect(await engines()).toEqual([
      expect.objectContaining({ name: FIRST, up: true }),
      expect.objectContaining({ name: second, up: true }),
    ]);
    // The container budget is derived from both engines together, not from this host alone.
    const [firstInfo, secondInfo] = await Promise.all([
      new Dockerode().info(),
      engine!.docker.info(),
    ]);
    const budget = (await plane!.admin('GET', '/api/pools')).body.budget;
    expect(budget.maxTotal).toBe(
      poolBudget(plane!.config, {
        memoryBytes: firstInfo.MemTotal + secondInfo.MemTotal,
        cpus: firstInfo.NCPU + secondInfo.NCPU,
      }).maxTotal,
    );
    await addServer('spread', 4);
    expect(await call('spread', 1)).toMatchObject({ ok: true, result: 2 });
    await until('four warm containers', async () => {
      const byEngine = await containersByEngine();
      return (byEngine[FIRST] ?? 0) + (byEngine[second] ?? 0) >= 5;
    });
    const byEngine = await containersByEngine();
    expect(byEngine[FIRST]).toBeGreaterThan(0);
    expect(byEngine[second]).toBeGreaterThan(0);
    const onSecond = await engine!.docker.listContainers({
      filters: { label: [`mcphost.plane=${plane!.config.planeName}`] },
    });
    expect(onSecond.length).toBe(byEngine[second]);
  }, 180_000);

  it('keeps serving on the first engine while the second is down', async () => {
    await engine!.halt();
    await until('the second engine marked down', async () =>
      (await engines()).some((row) => row.name === second && !row.up),
    );
    const answers = await Promise.all([1, 2, 3, 4, 5, 6].map((a) => call('spread', a)));
    for (const [index, answer] of answers.entries()) {
      expect(answer).toMatchObject({ ok: true, result: index + 2 });
    }
    // The pool refilled where an engine answers.
    await until('the pool back at four on the first engine', async () => {
      const byEngine = await containersByEngine();
      return (byEngine[second] ?? 0) === 0 && (byEngine[FIRST] ?? 0) >= 4;
    });
    const metrics = await fetch(`${plane!.adminUrl}/metrics`, {
      headers: { authorization: `Bearer ${plane!.config.adminToken}` },
    }).then((response) => response.text());
    expect(metrics).toContain(`mcphost_engine_up{engine="${second}"} 0`);
    expect((await fetch(`${plane!.adminUrl}/readyz`)).status).toBe(200);
  }, 180_000);

  it('takes the second engine back once it answers', async () => {
    await engine!.resume();
    await until('the second engine up again', async () =>
      (await engines()).some((row) => row.name === second && row.up),
    );
    await addServer('rejoined', 2);
    expect(await call('rejoined', 1)).toMatchObject({ ok: true, result: 2 });
    await until('a container on the second engine again', async () => {
      const byEngine = await containersByEngine();
      return (byEngine[second] ?? 0) > 0;
    });
  }, 180_000);
});

if (missing !== undefined) {
  describe('DOCKER_ENGINES on two engines', () => {
    it.skip(`skipped: ${missing}`, () => {});
  });
}
