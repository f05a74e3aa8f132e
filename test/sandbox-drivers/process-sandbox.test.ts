/** ProcessSandbox: local child processes, for development and fast tests (no isolation). */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProcessSandbox } from '../../control-plane/sandbox/process/process-sandbox.js';
import { buildRawBaselineCommand } from '../../control-plane/sandbox/harness-command.js';
import { collectLines, ECHO_HARNESS_DIR, smallSpec, stdoutUntilExit } from './helpers.js';

const warnings: string[] = [];
const driver = new ProcessSandbox({
  harnessDir: ECHO_HARNESS_DIR,
  warn: (message) => warnings.push(message),
});

afterAll(() => driver.close());

describe('ProcessSandbox', () => {
  it('warns once, at construction, that tools are not isolated', () => {
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/does not isolate tools/);
    expect(driver.kind).toBe('process');
  });

  it('has only runc (no extra kernel) and refuses runsc rather than run it unisolated', async () => {
    expect(await driver.runtimes()).toEqual(['runc']);
    const failure = await driver.start(smallSpec({ runtime: 'runsc' })).catch((error) => error);
    expect(failure).toMatchObject({ code: 'ERR_SANDBOX_UNAVAILABLE' });
    expect((failure as Error).message).toMatch(/cannot run runtime "runsc" \(it has: runc\)/);
  });

  it('runs the harness and round-trips lines over stdio', async () => {
    const instance = await driver.start(smallSpec());
    expect(instance.id).toMatch(/^process:\d+$/);
    const lines = collectLines(instance);
    expect(JSON.parse(await lines.next())).toMatchObject({
      type: 'ready',
      protocol: 1,
      node: process.version,
    });
    instance.write('one\ntwo\n');
    expect(await lines.next()).toBe('one');
    expect(await lines.next()).toBe('two');
    await Promise.all([instance.kill(), instance.kill()]);
    expect(await instance.exited).toMatchObject({
      exitCode: null,
      signal: 'SIGKILL',
      oomKilled: false,
    });
    // A dead instance refuses input loudly, so its caller fails at once instead of waiting.
    expect(() => instance.write('after death\n')).toThrow(/no longer takes input/);
  });

  it('runs harness.mjs with no environment but PATH, a temp cwd, and the heap flag from memoryMb', async () => {
    const harnessDir = await mkdtemp(join(tmpdir(), 'mcphost-probe-harness-'));
    await writeFile(
      join(harnessDir, 'harness.mjs'),
      'console.log(JSON.stringify({ env: process.env, cwd: process.cwd(), execArgv: process.execArgv }));',
    );
    try {
      const probing = new ProcessSandbox({ harnessDir, warn: () => {} });
      const instance = await probing.start(smallSpec({ memoryMb: 100 }));
      const facts = JSON.parse(await stdoutUntilExit(instance)) as {
        env: object;
        cwd: string;
        execArgv: string[];
      };
      expect(Object.keys(facts.env)).toEqual(['PATH']);
      expect(facts.cwd).toMatch(/mcphost-process-/);
      expect(facts.execArgv).toEqual(['--experimental-vm-modules', '--max-old-space-size=70']);
    } finally {
      await rm(harnessDir, { recursive: true, force: true });
    }
  });

  it('reports exit code and stderr tail, and heap exhaustion as out of memory', async () => {
    const failing = await driver.start(
      smallSpec({ command: ['node', '-e', 'console.error("bad"); process.exit(4)'] }),
    );
    expect(await failing.exited).toMatchObject({
      exitCode: 4,
      oomKilled: false,
      stderrTail: expect.stringContaining('bad'),
    });

    const hog = 'const a = []; for (;;) a.push(new Array(1e5).fill({ x: 1 }));';
    const hungry = await driver.start(
      smallSpec({ command: ['node', '--max-old-space-size=24', '-e', hog] }),
    );
    const exit = await hungry.exited;
    expect(exit.oomKilled).toBe(true);
    expect(exit.stderrTail).toMatch(/heap out of memory/i);
  });

  it('runs the raw echo baseline command', async () => {
    const instance = await driver.start(smallSpec({ command: buildRawBaselineCommand() }));
    const lines = collectLines(instance);
    instance.write('ping\n');
    expect(await lines.next()).toBe('ping');
    await instance.kill();
  });

  it('refuses to start after close()', async () => {
    const local = new ProcessSandbox({ harnessDir: ECHO_HARNESS_DIR, warn: () => {} });
    const instance = await local.start(smallSpec());
    await local.close();
    expect((await instance.exited).signal).toBe('SIGKILL');
    await expect(local.start(smallSpec())).rejects.toMatchObject({ code: 'ERR_SHUTTING_DOWN' });
  });
});
