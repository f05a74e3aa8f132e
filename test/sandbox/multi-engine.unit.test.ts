/**
 * The pure parts of DOCKER_ENGINES: reading an engine's address, placing a
 * container by free capacity, and the multi-engine driver's accounting and
 * failover over in-memory drivers (the real engines are in
 * test/sandbox-drivers/multi-engine.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { parseEngineAddress } from '../../control-plane/engine-address.js';
import { engineClient } from '../../control-plane/sandbox/create-sandbox.js';
import { loadConfig } from '../../control-plane/config.js';
import { placementOrder } from '../../control-plane/sandbox/engines/engine-placement.js';
import { MultiEngineSandbox } from '../../control-plane/sandbox/engines/multi-engine-sandbox.js';
import { FakeDriver } from './fake-driver.js';

const spec = { labels: {}, memoryMb: 128, cpus: 0.5, pids: 64 };

describe('parseEngineAddress', () => {
  it('reads local sockets and remote engines with their TLS folder', () => {
    expect(parseEngineAddress('unix:///var/run/docker.sock')).toEqual({
      name: 'unix:///var/run/docker.sock',
      kind: 'unix',
      socketPath: '/var/run/docker.sock',
    });
    expect(parseEngineAddress('tcp://10.0.0.5:2376?certs=/etc/mcphost/b')).toEqual({
      name: 'tcp://10.0.0.5:2376',
      kind: 'tcp',
      host: '10.0.0.5',
      port: 2376,
      certDir: '/etc/mcphost/b',
    });
  });

  it('refuses a remote engine without client certificates, and what is no engine', () => {
    expect(parseEngineAddress('tcp://10.0.0.5:2375')).toMatch(/needs \?certs=\/dir/);
    expect(parseEngineAddress('tcp://10.0.0.5:2376?certs=relative')).toMatch(/needs \?certs/);
    expect(parseEngineAddress('http://10.0.0.5:2376')).toMatch(/only unix:\/\/ and tcp:\/\//);
    expect(parseEngineAddress('unix://host/sock')).toMatch(/unix:\/\/\/absolute\/path/);
    expect(parseEngineAddress('/var/run/docker.sock')).toMatch(/is not unix/);
  });

  it('is validated with the configuration, naming the bad entry', () => {
    expect(() => loadConfig({ DOCKER_ENGINES: 'unix:///a.sock,tcp://b:2375' }, '/none')).toThrow(
      /DOCKER_ENGINES=.*"tcp:\/\/b:2375": a remote engine needs \?certs/,
    );
    expect(() => loadConfig({ DOCKER_ENGINES: 'unix:///a.sock,unix:///a.sock' }, '/none')).toThrow(
      /unix:\/\/\/a.sock is listed twice/,
    );
    expect(() => loadConfig({ DOCKER_ENGINES: ' , ' }, '/none')).toThrow(/names no engine/);
    expect(loadConfig({}, '/none').dockerEngines).toBeUndefined();
  });
});

describe('engineClient', () => {
  it('talks to the listed socket even when DOCKER_HOST names another engine', async () => {
    const before = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = 'tcp://10.9.9.9:2375';
    try {
      const docker = await engineClient({ name: 'x', kind: 'unix', socketPath: '/run/x.sock' });
      const modem = docker.modem as unknown as { socketPath?: string; host?: string };
      expect(modem.socketPath).toBe('/run/x.sock');
      expect(modem.host).toBeUndefined();
    } finally {
      if (before === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = before;
    }
  });

  it('reads the three TLS files of a remote engine, and fails naming a missing one', async () => {
    await expect(
      engineClient({
        name: 'r',
        kind: 'tcp',
        host: '10.0.0.5',
        port: 2376,
        certDir: '/nonexistent',
      }),
    ).rejects.toThrow(/ca\.pem/);
  });
});

describe('placementOrder', () => {
  const engine = (name: string, memoryMb: number, placedMb: number, containers = 0) => ({
    name,
    up: true,
    memoryMb,
    placedMb,
    containers,
  });

  it('prefers the most free memory, then fewer containers, then the listed order', () => {
    const names = (list: ReturnType<typeof engine>[]) =>
      placementOrder(list, 128, undefined).map((e) => e.name);
    expect(names([engine('a', 1000, 600), engine('b', 1000, 100)])).toEqual(['b', 'a']);
    expect(names([engine('a', 1000, 100, 3), engine('b', 1000, 100, 1)])).toEqual(['b', 'a']);
    expect(names([engine('a', 1000, 100, 1), engine('b', 1000, 100, 1)])).toEqual(['a', 'b']);
  });

  it('never picks an engine that is down or lacks the runtime asked for', () => {
    const down = { ...engine('a', 8000, 0), up: false };
    const noGvisor = { ...engine('b', 8000, 0), runtimes: ['runc'] };
    const gvisor = { ...engine('c', 1000, 0), runtimes: ['runc', 'runsc'] };
    expect(placementOrder([down, noGvisor, gvisor], 128, 'runsc').map((e) => e.name)).toEqual([
      'c',
    ]);
  });
});

describe('MultiEngineSandbox', () => {
  function twoEngines() {
    const drivers = { a: new FakeDriver(), b: new FakeDriver() };
    const logs: string[] = [];
    const sandbox = new MultiEngineSandbox({
      engines: (['a', 'b'] as const).map((name) => ({
        name,
        open: async () => {
          await drivers[name].ping();
          return drivers[name];
        },
        capacity: async () => ({ memoryMb: 4096, cpus: 2 }),
      })),
      checkIntervalMs: 60_000,
      startTimeoutMs: 200,
      log: (message, details) => logs.push(`${message} ${String(details.engine)}`),
    });
    return { drivers, sandbox, logs };
  }

  it('spreads containers, counts them until they exit, and tells the engine of each', async () => {
    const { drivers, sandbox } = twoEngines();
    await sandbox.open();
    const started = await Promise.all([1, 2, 3, 4].map(() => sandbox.start(spec)));
    expect(started.map((instance) => instance.engine).sort()).toEqual(['a', 'a', 'b', 'b']);
    expect(sandbox.stats().map((e) => [e.name, e.containers, e.placedMb])).toEqual([
      ['a', 2, 256],
      ['b', 2, 256],
    ]);
    await started[0]!.kill();
    await started[0]!.exited;
    await new Promise((resolve) => setImmediate(resolve));
    expect(sandbox.stats().reduce((sum, e) => sum + e.containers, 0)).toBe(3);
    expect(drivers.a.live().length + drivers.b.live().length).toBe(3);
    await sandbox.close();
  });

  it('passes over an engine that stops answering, stays ready on the other, and takes it back', async () => {
    const { drivers, sandbox, logs } = twoEngines();
    await sandbox.open();
    drivers.b.failing = true;
    // Every start lands on `a`; a start tried on `b` fails over within the same call.
    const started = await Promise.all([1, 2, 3].map(() => sandbox.start(spec)));
    expect(started.every((instance) => instance.engine === 'a')).toBe(true);
    expect(sandbox.stats().find((e) => e.name === 'b')?.up).toBe(false);
    expect(logs).toContain('Docker engine down: new containers go to the others b');
    await expect(sandbox.ping()).resolves.toBeUndefined();

    drivers.a.failing = true;
    await expect(sandbox.ping()).rejects.toMatchObject({ code: 'ERR_SANDBOX_UNAVAILABLE' });
    // A call's error never names the operator's engines (internal addresses).
    await expect(sandbox.start(spec)).rejects.toMatchObject({
      code: 'ERR_SANDBOX_UNAVAILABLE',
      message: 'no Docker engine answers',
    });

    drivers.b.failing = false;
    await sandbox.open(); // a check of every engine, as the timer runs it
    expect(sandbox.stats().find((e) => e.name === 'b')?.up).toBe(true);
    expect((await sandbox.start(spec)).engine).toBe('b');
    await sandbox.close();
  });

  it('starts when one engine answers, and fails naming every engine when none does', async () => {
    const { drivers, sandbox } = twoEngines();
    drivers.a.failing = true;
    await sandbox.open();
    expect(sandbox.stats().map((e) => e.up)).toEqual([false, true]);
    // The budget is derived from the engines that answered.
    expect(sandbox.capacity()).toEqual({ memoryBytes: 4096 * 1048576, cpus: 2 });
    await sandbox.close();

    const none = twoEngines();
    none.drivers.a.failing = true;
    none.drivers.b.failing = true;
    await expect(none.sandbox.open()).rejects.toThrow(/no Docker engine answers \(a, b\)/);
  });

  it('does not pass over an engine for a spec that is the call’s own fault', async () => {
    const { drivers, sandbox } = twoEngines();
    await sandbox.open();
    drivers.a.start = async () => {
      throw new TypeError('bad spec');
    };
    drivers.b.start = drivers.a.start;
    await expect(sandbox.start(spec)).rejects.toThrow('bad spec');
    expect(sandbox.stats().every((e) => e.up && e.containers === 0)).toBe(true);
    await sandbox.close();
  });

  it('passes over for a while an engine that answers but fails its starts', async () => {
    const { drivers, sandbox, logs } = twoEngines();
    await sandbox.open();
    drivers.a.start = async () => {
      throw new Error('No such image: mcphost-runner:abc');
    };
    // The failing engine looks emptiest; the start still succeeds on the other.
    expect((await sandbox.start(spec)).engine).toBe('b');
    expect((await sandbox.start(spec)).engine).toBe('b');
    expect(logs.some((line) => line.startsWith('Docker engine failed a container start'))).toBe(
      true,
    );
    expect(sandbox.stats().find((e) => e.name === 'a')).toMatchObject({ up: true, containers: 0 });
    await sandbox.close();
  });

  it('pauses no engine for a start that fails on every engine: that is the spec’s own failure', async () => {
    const { drivers, sandbox, logs } = twoEngines();
    await sandbox.open();
    // A tenant's settings that no engine can start (say, a runtime broken everywhere).
    for (const driver of [drivers.a, drivers.b]) {
      const start = driver.start.bind(driver);
      driver.start = async (asked) => {
        if (asked.runtime === 'runsc') throw new Error('runsc: cannot start the sandbox');
        return start(asked);
      };
    }
    await expect(sandbox.start({ ...spec, runtime: 'runsc' })).rejects.toThrow(/runsc/);
    expect(logs.some((line) => line.startsWith('Docker engine failed a container start'))).toBe(
      false,
    );
    // Another tenant's start is not held back.
    expect((await sandbox.start(spec)).engine).toBe('a');
    await sandbox.close();
  });

  it('abandons a start that hangs on an engine that stopped answering, and ends its containers', async () => {
    const { drivers, sandbox } = twoEngines();
    await sandbox.open();
    const started = await Promise.all([sandbox.start(spec), sandbox.start(spec)]);
    const running = started.find((instance) => instance.engine === 'a')!;
    // Engine a hangs: starts never answer, pings fail. With one container on
    // each engine, a is tried first (listed first), abandoned after the start
    // timeout, and the start lands on b.
    drivers.a.start = () => new Promise(() => {});
    drivers.a.failing = true;
    expect((await sandbox.start(spec)).engine).toBe('b');
    expect(sandbox.stats().find((e) => e.name === 'a')).toMatchObject({ up: false });
    // Its running container is over for the pool, though the engine never said so.
    await expect(running.exited).resolves.toMatchObject({
      exitCode: null,
      stderrTail: expect.stringContaining('stopped answering'),
    });
    expect(() => running.write('{}\n')).toThrow(/stopped answering/);
    await sandbox.close();
  });
});
