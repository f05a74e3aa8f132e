/**
 * The hostile-tool corpus (test/fixtures/hostile/*.js) against the real
 * harness in real containers. Each fixture's header says what it attacks and
 * what must come of it (`expect:` a code or `ok`, `message:` a pattern,
 * `message-not:` a pattern that would mean an escape). After each attack the
 * same pool must serve an ordinary call. The corpus runs under runc and under
 * gVisor's runsc (skipped, visibly, only when the engine lacks runsc).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DockerSandbox } from '../../control-plane/sandbox/docker/docker-sandbox.js';
import type { SandboxManager } from '../../control-plane/sandbox/sandbox-manager.js';
import {
  TEST_LIMITS,
  dockerManager,
  hooks,
  runnerImage,
  runtime,
  uniquePlaneName,
} from './docker-helpers.js';
import { describeEachRuntime } from '../support/oci-runtimes.js';

const HOSTILE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'hostile');

const limits = { ...TEST_LIMITS, timeoutMs: 1_500, memoryMb: 96, maxLogBytes: 16 * 1024 };

interface Fixture {
  name: string;
  code: string;
  attacks: string;
  expect: string;
  message?: RegExp;
  messageNot?: RegExp;
  /** Per-fixture limits over the corpus defaults (`// limits: {json}`). */
  limits?: Partial<typeof limits>;
}

function header(code: string, key: string): string | undefined {
  return new RegExp(`^// ${key}: (.+)$`, 'm').exec(code)?.[1]?.trim();
}

const fixtures: Fixture[] = readdirSync(HOSTILE_DIR)
  .filter((file) => file.endsWith('.js'))
  .sort()
  .map((file) => {
    const code = readFileSync(join(HOSTILE_DIR, file), 'utf8');
    const expected = header(code, 'expect');
    if (!expected) throw new Error(`${file} has no "// expect:" line`);
    const message = header(code, 'message');
    const messageNot = header(code, 'message-not');
    const ownLimits = header(code, 'limits');
    return {
      name: file,
      code,
      attacks: header(code, 'attacks') ?? '',
      expect: expected,
      ...(message ? { message: new RegExp(message) } : {}),
      ...(messageNot ? { messageNot: new RegExp(messageNot) } : {}),
      ...(ownLimits ? { limits: JSON.parse(ownLimits) as Partial<typeof limits> } : {}),
    };
  });

let driver: DockerSandbox;
let sandbox: SandboxManager;

beforeAll(async () => {
  ({ driver, sandbox } = dockerManager(await runnerImage(), uniquePlaneName('hostile'), {
    defaults: { minWarm: 0, maxSize: 1, timeoutGraceMs: 500, limits },
  }));
  await sandbox.start();
});

afterAll(async () => {
  await sandbox.close();
  await driver.close();
});

describeEachRuntime('hostile tool corpus', (ociRuntime) => {
  it('has fixtures', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(10);
  });

  it.each(fixtures)('$name', async (fixture) => {
    const poolKey = `hostile-${ociRuntime}/${fixture.name}`;
    const outcome = await sandbox.invoke(
      runtime(poolKey, fixture.code, {
        runtime: ociRuntime,
        limits: { ...limits, ...fixture.limits },
      }),
      hooks(),
    );
    if (fixture.expect === 'ok') {
      expect(outcome.error).toBeUndefined();
      const logBytes = outcome.logs.reduce((sum, entry) => sum + Buffer.byteLength(entry.text), 0);
      expect(logBytes).toBeLessThanOrEqual(limits.maxLogBytes + 2 * 1024);
    } else {
      expect(outcome.ok, `${fixture.attacks} → ${JSON.stringify(outcome.error)}`).toBe(false);
      expect(outcome.error?.code).toBe(fixture.expect);
      if (fixture.message) expect(outcome.error?.message).toMatch(fixture.message);
      if (fixture.messageNot) expect(outcome.error?.message).not.toMatch(fixture.messageNot);
    }
    expect(outcome.error?.message ?? '').not.toMatch(/ESCAPED/);
    // The pool recovers: the next ordinary call on the same pool succeeds. Its time
    // limit is generous: a container that just absorbed a flood may be slow for a
    // moment on a loaded machine (gVisor above all), and speed is not what is tested.
    const next = await sandbox.invoke(
      runtime(poolKey, 'return params.n + 1;', {
        runtime: ociRuntime,
        limits: { ...limits, timeoutMs: 15_000 },
      }),
      hooks({ n: 41 }),
    );
    expect(next, `the next call: ${JSON.stringify(next.error)}`).toMatchObject({
      ok: true,
      value: 42,
    });
    // Nothing the attack left running (timers, forged lines) is attributed to the next call.
    expect(next.logs).toEqual([]);
  });

  it('no globals leak from one invocation to the next in the same container', async () => {
    const poolKey = `hostile-${ociRuntime}/pollution`;
    const polluter =
      'Object.prototype.polluted = "yes"; globalThis.leftover = env.SECRET; return 1;';
    const first = await sandbox.invoke(
      runtime(poolKey, polluter, { runtime: ociRuntime, limits, env: { SECRET: 's3cret' } }),
      hooks(),
    );
    expect(first.value).toBe(1);
    const probe = 'return [({}).polluted ?? null, typeof leftover];';
    const second = await sandbox.invoke(
      runtime(poolKey, probe, { runtime: ociRuntime, limits }),
      hooks(),
    );
    expect(second.instanceId).toBe(first.instanceId);
    expect(second.value).toEqual([null, 'undefined']);
  });

  it("no pollution of the web platform's prototypes reaches the next invocation", async () => {
    const poolKey = `hostile-${ociRuntime}/web-pollution`;
    const polluter = `
      URL.prototype.toString = () => 'polluted'; URLSearchParams.prototype.polluted = true;
      TextDecoder.prototype.decode = () => 'polluted'; Headers.prototype.polluted = true;
      Response.prototype.polluted = true; AbortSignal.prototype.polluted = true;
      Object.getPrototypeOf(crypto).randomUUID = () => 'polluted'; globalThis.btoa = () => 'polluted';
      return 1;`;
    const first = await sandbox.invoke(
      runtime(poolKey, polluter, { runtime: ociRuntime, limits }),
      hooks(),
    );
    expect(first.value).toBe(1);
    const probe = `return [String(new URL('http://a/b')), 'polluted' in URLSearchParams.prototype,
      new TextDecoder().decode(new Uint8Array([104, 105])), 'polluted' in Headers.prototype,
      'polluted' in Response.prototype, 'polluted' in AbortSignal.prototype,
      crypto.randomUUID().length, btoa('hi')];`;
    const second = await sandbox.invoke(
      runtime(poolKey, probe, { runtime: ociRuntime, limits }),
      hooks(),
    );
    expect(second.instanceId).toBe(first.instanceId);
    expect(second.value).toEqual(['http://a/b', false, 'hi', false, false, false, 36, 'aGk=']);
  });

  it(`ran the corpus under ${ociRuntime}`, async () => {
    const ours = await driver.client.listByLabels({
      'mcphost.plane-instance': driver.planeInstance,
    });
    const pools = ours.filter((container) =>
      container.labels['mcphost.pool']?.includes(`hostile-${ociRuntime}/`),
    );
    expect(pools.length).toBeGreaterThan(0);
    for (const container of pools)
      expect((await driver.client.inspect(container.id))?.HostConfig.Runtime).toBe(ociRuntime);
  });
});
