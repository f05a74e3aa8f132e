/**
 * Issue 28, finding 4: attacker servers whose schema checks all run to the
 * deadline occupied both schema-check workers, and a victim server's checks
 * waited behind them (median 5 → 2,463 ms) or failed as "took longer than
 * 250 ms" on a freshly replaced worker. First the checker alone (real
 * worker threads), where each check's place in its lane is recorded; then a
 * real control plane, real Docker, the official SDK client: three attacker
 * servers flood, a victim calls.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import SqliteDatabase from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LIGHT_CHECK_BUDGET,
  SchemaChecker,
  type SchemaBearingTool,
  type SchemaCheckRecord,
} from '../../../control-plane/invocation/schema-checker.js';
import { SQLITE_FILE_NAME } from '../../../control-plane/store/store-dialect.js';
import { loopbackFetch } from '../../support/loopback-fetch.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

/** Each level validates the child twice: exponential in the nesting of the value (202 characters). */
const EXPONENTIAL = {
  type: 'object',
  $defs: {
    n: {
      anyOf: [
        { allOf: [{ properties: { a: { $ref: '#/$defs/n' } } }, { required: ['never'] }] },
        { properties: { a: { $ref: '#/$defs/n' } } },
      ],
    },
  },
  properties: { a: { $ref: '#/$defs/n' } },
};
const SIMPLE = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
/** A word checked by RE2: a few hundred nanoseconds a character. */
const WORD = { type: 'string', pattern: '^[a-z]+$' };

function nested(depth: number): Record<string, unknown> {
  return JSON.parse('{"a":'.repeat(depth) + '{}' + '}'.repeat(depth));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

function tool(subdomain: string, schema: Record<string, unknown>): SchemaBearingTool {
  return { subdomain, name: 't', version: 1, inputSchema: schema };
}

describe('SchemaChecker: whose check runs next (issue 28, finding 4)', () => {
  const TIMEOUT_MS = 250;
  let checker: SchemaChecker;
  const records: SchemaCheckRecord[] = [];
  /** A value past the light lane's budget for SIMPLE: checked in the heavy lane. */
  const LARGE = { n: 1, pad: 'x'.repeat(LIGHT_CHECK_BUDGET) };

  beforeAll(async () => {
    checker = new SchemaChecker({
      timeoutMs: TIMEOUT_MS,
      onCheck: (record) => records.push(record),
    });
    await Promise.all([
      checker.check(tool('warm', SIMPLE), 'inputSchema', { n: 1 }),
      checker.check(tool('warm', SIMPLE), 'inputSchema', LARGE),
    ]);
  });
  afterAll(() => checker?.close());

  function recordsOf(server: string, from: number): SchemaCheckRecord[] {
    return records.slice(from).filter((record) => record.server === server);
  }

  it('starts a light check next however many servers flood the light lane', async () => {
    // Eight servers that keep forty checks each waiting, each check a few milliseconds
    // of patterns: a round-robin would start up to eight checks before a newcomer's,
    // each time. They have been at it before (a flood that has just begun is eight
    // newcomers, each with its fair turn).
    const words = { type: 'object', properties: { words: { type: 'array', items: WORD } } };
    const value = { words: Array.from({ length: 1_000 }, () => 'abcdefghijklmnop') };
    const flood = () =>
      Array.from({ length: 8 }, (_, i) =>
        Array.from({ length: 40 }, () =>
          checker.check(tool(`flood${i}`, words), 'inputSchema', value),
        ),
      ).flat();
    const warmed = records.length;
    expect((await Promise.all(flood())).every((check) => check.ok)).toBe(true);
    expect(records.slice(warmed).every((record) => record.lane === 'light')).toBe(true);
    const from = records.length;
    const floods = flood();
    for (let n = 0; n < 10; n++) {
      expect(await checker.check(tool('victim-light', SIMPLE), 'inputSchema', { n })).toEqual({
        ok: true,
      });
    }
    await Promise.all(floods);
    const victim = recordsOf('victim-light', from);
    expect(victim.map((record) => record.lane)).toEqual(Array(10).fill('light'));
    expect(victim.map((record) => record.startedAhead)).toEqual(Array(10).fill(0));
  });

  it('keeps checks that overrun in the heavy lane, away from light checks', async () => {
    const from = records.length;
    const attackers = Array.from({ length: 4 }, (_, i) =>
      Array.from({ length: 2 }, () =>
        checker.check(tool(`attacker${i}`, EXPONENTIAL), 'inputSchema', nested(30)),
      ),
    ).flat();
    for (let n = 0; n < 10; n++) {
      expect(await checker.check(tool('victim', SIMPLE), 'inputSchema', { n })).toEqual({
        ok: true,
      });
    }
    const answers = await Promise.all(attackers);
    expect(answers.every((answer) => !answer.ok && answer.reason === 'unchecked')).toBe(true);
    expect(recordsOf('victim', from).map((record) => record.lane)).toEqual(Array(10).fill('light'));
    for (let i = 0; i < 4; i++) {
      const attacker = recordsOf(`attacker${i}`, from);
      expect(attacker.map((record) => `${record.lane}:${record.overran}`)).toEqual(
        Array(2).fill('heavy:true'),
      );
    }
  });

  it('starts a heavy check next however many servers flood the heavy lane, and never fails it', async () => {
    // A checked value too large for the light lane shares the heavy lane with the floods.
    const from = records.length;
    let flooding = true;
    const attackers = Array.from({ length: 4 }, async (_, i) => {
      while (flooding) {
        await Promise.all(
          Array.from({ length: 3 }, () =>
            checker.check(tool(`heavy-attacker${i}`, EXPONENTIAL), 'inputSchema', nested(30)),
          ),
        );
      }
    });
    // Every attacker has overrun once: the flood is under way.
    await expect
      .poll(
        () =>
          new Set(
            records
              .slice(from)
              .filter((r) => r.overran)
              .map((r) => r.server),
          ).size,
        {
          timeout: 30_000,
        },
      )
      .toBe(4);
    for (let n = 0; n < 3; n++) {
      expect(await checker.check(tool('heavy-victim', SIMPLE), 'inputSchema', LARGE)).toEqual({
        ok: true,
      });
    }
    flooding = false;
    await Promise.all(attackers);
    const victim = recordsOf('heavy-victim', from);
    expect(victim.map((record) => `${record.lane}:${record.overran}`)).toEqual(
      Array(3).fill('heavy:false'),
    );
    // The next check to start each time, though up to eleven waited before it: only
    // the one running when it came was ahead of it.
    expect(victim.map((record) => record.startedAhead)).toEqual(Array(3).fill(0));
    const waited = victim.map((record) => record.waitedMs.toFixed(0)).join(', ');
    const ran = victim.map((record) => record.ranMs.toFixed(0)).join(', ');
    console.log(`heavy-lane victim waited ${waited} ms behind 4 flooding servers, ran ${ran} ms`);
  }, 60_000);
});

describe('schema checks shared fairly between servers (issue 28, finding 4)', () => {
  const ATTACKERS = ['attacker1', 'attacker2', 'attacker3'];
  /** Calls each attacker keeps in flight. */
  const ATTACKER_CONCURRENCY = 3;
  const VICTIM_CALLS = 20;
  let plane: TestControlPlane;
  const clients: Client[] = [];

  async function connect(subdomain: string): Promise<Client> {
    const client = new Client({ name: 'schema-fairness-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(plane.mcpUrl(subdomain), { fetch: loopbackFetch }),
    );
    clients.push(client);
    return client;
  }

  async function save(subdomain: string, name: string, body: object): Promise<void> {
    const response = await plane.admin('PUT', `/api/servers/${subdomain}/tools/${name}`, body);
    expect(response.status, JSON.stringify(response.body)).toBe(201);
  }

  beforeAll(async () => {
    plane = await startTestControlPlane();
    for (const subdomain of [...ATTACKERS, 'victim']) {
      expect((await plane.admin('POST', '/api/servers', { subdomain })).status).toBe(201);
    }
    for (const subdomain of ATTACKERS) {
      await save(subdomain, 'nested', {
        description: 'An exponential inputSchema, once it is written in below.',
        inputSchema: { type: 'object' },
        code: 'return {};',
      });
    }
    // Schemas like EXPONENTIAL are refused at save now; a store may still hold
    // one saved before. Written into the database, read at the restart.
    const database = new SqliteDatabase(join(plane.dataDir, SQLITE_FILE_NAME));
    try {
      database
        .prepare(
          "UPDATE server_entries SET definition = json_set(definition, '$.inputSchema', json(?)) WHERE kind = 'tool' AND name = 'nested'",
        )
        .run(JSON.stringify(EXPONENTIAL));
    } finally {
      database.close();
    }
    await plane.restart();
    await save('victim', 'checked', {
      description: 'A schema tool of an honest server.',
      inputSchema: SIMPLE,
      outputSchema: { type: 'object', properties: { doubled: { type: 'integer' } } },
      code: 'return { doubled: params.n * 2 };',
    });
  }, 180_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await plane?.close();
  });

  async function victimCalls(victim: Client): Promise<{ latencies: number[]; failures: string[] }> {
    const latencies: number[] = [];
    const failures: string[] = [];
    for (let n = 0; n < VICTIM_CALLS; n++) {
      const started = performance.now();
      const result = (await victim.callTool({
        name: 'checked',
        arguments: { n },
      })) as CallToolResult;
      latencies.push(performance.now() - started);
      if (process.env.FAIRNESS_TRACE)
        console.log(
          `victim call ${n}: ${(performance.now() - started).toFixed(0)} ms ${result.isError ? textOf(result) : ''}`,
        );
      if (result.isError) failures.push(textOf(result));
      else expect(result.structuredContent).toEqual({ doubled: 2 * n });
    }
    return { latencies, failures };
  }

  it('answers every victim call while three attacker servers flood the schema checks', async () => {
    const victim = await connect('victim');
    // Warm: a container started, the schema compiled; what follows times checks and calls.
    for (let n = 0; n < 3; n++) await victim.callTool({ name: 'checked', arguments: { n } });
    const quiet = await victimCalls(victim);

    let flooding = true;
    let attackerCalls = 0;
    const attackerLatencies: number[] = [];
    const attackerTexts = new Set<string>();
    const attackers = await Promise.all(
      ATTACKERS.flatMap((subdomain) =>
        Array.from({ length: ATTACKER_CONCURRENCY }, () => connect(subdomain)),
      ),
    );
    const floods = attackers.map(async (attacker) => {
      while (flooding) {
        const started = performance.now();
        const result = (await attacker.callTool({
          name: 'nested',
          arguments: nested(30),
        })) as CallToolResult;
        attackerLatencies.push(performance.now() - started);
        attackerCalls++;
        attackerTexts.add(textOf(result));
      }
    });
    // Every attacker holds checks running or waiting before the victim calls.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const loaded = await victimCalls(victim);
    flooding = false;
    await Promise.all(floods);

    console.log(
      `victim median ${median(quiet.latencies).toFixed(1)} ms alone, ` +
        `${median(loaded.latencies).toFixed(1)} ms under the flood ` +
        `(${loaded.failures.length}/${VICTIM_CALLS} failed); ` +
        `attackers: ${attackerCalls} calls, median ${median(attackerLatencies).toFixed(0)} ms`,
    );
    expect([...attackerTexts].every((text) => /could not be checked/.test(text))).toBe(true);
    expect(loaded.failures).toEqual([]);
  }, 180_000);
});
