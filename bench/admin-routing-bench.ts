/**
 * The admin side's routing alone, ours against express 5 (issue 32): the real
 * route table (`adminRoutes`, 56 routes, built over a stub context whose
 * handlers never run) mounted twice in one process, each route answering the
 * same small JSON through `sendJson`, and an unmatched path answering the
 * registry's 404 through `sendError`:
 * - `ours`: node:http, `parseRequestTarget`, `Router.match`, as admin-api.ts;
 * - `express`: express 5 with the same patterns in the same order, a last
 *   middleware for the 404 and an error handler (etag and x-powered-by off);
 * - `bare`: node:http answering the JSON without any routing (the floor).
 * Authentication, audit and the store are left out on purpose: they are the
 * same code under either router. One undici client on loopback, one request
 * in flight, rounds alternated so all three see the same machine. CPU per
 * request is the whole process's (client included), so differences between
 * the servers are what routing costs.
 * Runnable alone: `npx tsx bench/admin-routing-bench.ts [rounds] [requests]`.
 * express and @types/express are development dependencies for this bench only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import express from 'express';
import { Pool } from 'undici';
import { adminRoutes } from '../control-plane/admin/admin-api.js';
import { McphostError } from '../control-plane/errors.js';
import { Router, sendError, sendJson } from '../control-plane/http/index.js';
import { parseRequestTarget } from '../control-plane/http/request-target.js';
import { percentile } from './stats.js';

/** A context whose every property and call is itself: registering routes reads it, no handler runs. */
const stub: unknown = new Proxy(function () {}, {
  get: (_target, key) => (key === Symbol.toPrimitive ? undefined : stub),
  apply: () => stub,
});
const table = adminRoutes(stub as never, stub as never).routes();

const LISTED = { tools: [{ name: 'echo', description: 'Echoes its input', version: 3 }] };

/** Paths asked for: early in the table, the last route, and none. */
const CASES = [
  { name: 'GET a listed resource', path: '/api/servers/demo/tools', status: 200 },
  { name: 'GET the last route', path: '/api/audit', status: 200 },
  { name: 'GET an unknown path (404)', path: '/api/nothing/here', status: 404 },
] as const;

function notFound(method: string | undefined, pathname: string): McphostError {
  return new McphostError('ERR_NOT_FOUND', `no such endpoint: ${method} ${pathname}`);
}

function ours(): Server {
  const router = new Router<unknown>();
  for (const route of table) router.add(route.method, route.path, route.rule, () => {});
  return createServer((req, res) => {
    const url = parseRequestTarget(req.url);
    if (url === undefined) return sendError(res, new McphostError('ERR_BAD_REQUEST', 'bad target'));
    const match = router.match(req.method ?? 'GET', url.pathname);
    if (match.kind === 'found') return sendJson(res, 200, { ...LISTED, params: match.params });
    if (match.kind === 'method-not-allowed') {
      return sendError(res, new McphostError('ERR_METHOD_NOT_ALLOWED', 'not allowed'), {
        allow: match.allowed.join(', '),
      });
    }
    sendError(res, notFound(req.method, url.pathname));
  });
}

function viaExpress(): Server {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  for (const route of table) {
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    app[method](route.path, (req, res) => sendJson(res, 200, { ...LISTED, params: req.params }));
  }
  app.use((req, res) => sendError(res, notFound(req.method, req.path)));
  app.use(
    (error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) =>
      sendError(res, error),
  );
  return createServer(app);
}

function bare(): Server {
  return createServer((_req: IncomingMessage, res: ServerResponse) =>
    sendJson(res, 200, { ...LISTED, params: {} }),
  );
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

interface Sample {
  latencies: number[];
  cpuMicros: number;
  requests: number;
}

async function round(pool: Pool, path: string, expected: number, requests: number, into: Sample) {
  const cpu = process.cpuUsage();
  for (let i = 0; i < requests; i++) {
    const started = performance.now();
    const answer = await pool.request({ method: 'GET', path });
    await answer.body.text();
    into.latencies.push(performance.now() - started);
    if (answer.statusCode !== expected) {
      throw new Error(`${path}: status ${answer.statusCode}, expected ${expected}`);
    }
  }
  const used = process.cpuUsage(cpu);
  into.cpuMicros += used.user + used.system;
  into.requests += requests;
}

export async function runAdminRoutingBench(rounds = 20, requests = 500): Promise<void> {
  const servers = { ours: ours(), express: viaExpress(), bare: bare() };
  const pools = Object.fromEntries(
    await Promise.all(
      Object.entries(servers).map(async ([name, server]) => [
        name,
        new Pool(await listen(server), { connections: 1 }),
      ]),
    ),
  ) as Record<keyof typeof servers, Pool>;
  const names = Object.keys(servers) as (keyof typeof servers)[];
  console.log(
    `admin routing: ${table.length} routes, ${rounds} rounds of ${requests}, Node ${process.version}`,
  );
  try {
    for (const testCase of CASES) {
      const samples = Object.fromEntries(
        names.map((name) => [name, { latencies: [], cpuMicros: 0, requests: 0 } as Sample]),
      ) as Record<keyof typeof servers, Sample>;
      for (const name of names)
        await round(pools[name], testCase.path, name === 'bare' ? 200 : testCase.status, 200, {
          latencies: [],
          cpuMicros: 0,
          requests: 0,
        }); // warm-up
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 === 0 ? names : [...names].reverse();
        for (const name of order) {
          await round(
            pools[name],
            testCase.path,
            name === 'bare' ? 200 : testCase.status,
            requests,
            samples[name],
          );
        }
      }
      console.log(`  ${testCase.name} (${testCase.path}):`);
      for (const name of names) {
        const sample = samples[name];
        console.log(
          `    ${name.padEnd(8)} p50 ${(percentile(sample.latencies, 50) * 1000).toFixed(0)} µs, p99 ${(percentile(sample.latencies, 99) * 1000).toFixed(0)} µs, CPU ${(sample.cpuMicros / sample.requests).toFixed(1)} µs/request`,
        );
      }
    }
  } finally {
    await Promise.all(Object.values(pools).map((pool) => pool.close()));
    for (const server of Object.values(servers)) server.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runAdminRoutingBench(Number(process.argv[2] ?? 20), Number(process.argv[3] ?? 500));
}
