/**
 * DockerSandbox against the real engine: hardening as the engine records it
 * and as a process inside feels it, stdio round trips, exits (own, killed,
 * kernel OOM, V8 heap OOM), reaping scoped by plane, ping failures.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { hostname } from 'node:os';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMcphostError } from '../../control-plane/errors.js';
import { DockerSandbox } from '../../control-plane/sandbox/docker/docker-sandbox.js';
import {
  collectLines,
  ensureEchoRunnerImage,
  smallSpec,
  stdoutUntilExit,
  uniquePlaneName,
} from './helpers.js';

let image: string;
const drivers: DockerSandbox[] = [];

function newDriver(planeName = uniquePlaneName('docker')): DockerSandbox {
  const driver = new DockerSandbox({ image, planeName, killTimeoutMs: 5_000 });
  drivers.push(driver);
  return driver;
}

beforeAll(async () => {
  image = await ensureEchoRunnerImage();
});

afterAll(async () => {
  await Promise.all(drivers.map((driver) => driver.close()));
});

describe('DockerSandbox hardening', () => {
  it('creates containers with every hardening field and the plane labels', async () => {
    const driver = newDriver();
    const instance = await driver.start(
      smallSpec({
        labels: { 'mcphost.pool': 'p1', 'mcphost.tool': 'srv/tool', 'mcphost.instance': 'i-1' },
        memoryMb: 96,
        cpus: 0.25,
        pids: 32,
      }),
    );
    const info = await driver.client.inspect(instance.id);
    expect(info).toBeDefined();
    const host = info!.HostConfig;
    expect(host.NetworkMode).toBe('none');
    expect(host.ReadonlyRootfs).toBe(true);
    expect(host.Tmpfs).toEqual({ '/tmp': 'rw,noexec,nosuid,nodev,size=16m' });
    expect(host.CapDrop).toEqual(['ALL']);
    expect(host.CapAdd ?? []).toEqual([]);
    expect(host.SecurityOpt).toEqual(['no-new-privileges']);
    expect(host.Privileged).toBe(false);
    expect(host.PidsLimit).toBe(32);
    expect(host.Memory).toBe(96 * 1024 * 1024);
    expect(host.MemorySwap).toBe(96 * 1024 * 1024);
    // 0.25 CPU as a quota of 250 ms per (the kernel's longest) 1 s period: the harness boots unthrottled.
    expect(host.CpuPeriod).toBe(1_000_000);
    expect(host.CpuQuota).toBe(250_000);
    expect(host.NanoCpus ?? 0).toBe(0);
    expect(host.Ulimits).toEqual([{ Name: 'nofile', Soft: 256, Hard: 256 }]);
    expect(host.AutoRemove).toBe(false); // removed by the driver after inspecting the exit
    expect(host.LogConfig?.Type).toBe('none');
    expect(info!.Config.User).toBe('10001:10001');
    expect(info!.Config.OpenStdin).toBe(true);
    expect(info!.Config.StdinOnce).toBe(false);
    expect(info!.Config.Tty).toBe(false);
    expect(info!.Config.AttachStdin).toBe(true);
    expect(info!.Config.Entrypoint).toEqual([
      'node',
      '--experimental-vm-modules',
      '--max-old-space-size=67',
      '/opt/mcphost/harness.mjs',
    ]);
    expect(info!.Config.Labels).toMatchObject({
      'mcphost.plane': expect.stringMatching(/^test-drivers-docker-/),
      'mcphost.plane-instance': driver.planeInstance,
      'mcphost.pool': 'p1',
      'mcphost.tool': 'srv/tool',
      'mcphost.instance': 'i-1',
    });
    expect(info!.State.Running).toBe(true);
    await instance.kill();
  });

  it('confines the process: non-root, no capabilities, read-only root, noexec /tmp, loopback only', async () => {
    const probe = `
      const fs = require('fs'), os = require('os');
      const status = fs.readFileSync('/proc/self/status', 'utf8');
      const field = (name) => status.match(new RegExp(name + ':\\\\s*(\\\\S+)'))[1];
      let rootWrite = 'allowed';
      try { fs.writeFileSync('/probe', 'x'); } catch (e) { rootWrite = e.code; }
      fs.writeFileSync('/tmp/probe.sh', '#!/bin/sh');
      fs.chmodSync('/tmp/probe.sh', 0o755);
      let tmpExec = 'allowed';
      try { require('child_process').execFileSync('/tmp/probe.sh'); } catch (e) { tmpExec = e.code; }
      console.log(JSON.stringify({
        uid: process.getuid(), gid: process.getgid(), capEff: field('CapEff'), noNewPrivs: field('NoNewPrivs'),
        rootWrite, tmpExec, interfaces: Object.keys(os.networkInterfaces()),
        nofile: fs.readFileSync('/proc/self/limits', 'utf8').split('\\n').find((l) => l.startsWith('Max open files')),
      }));`;
    const instance = await newDriver().start(smallSpec({ command: ['node', '-e', probe] }));
    const output = await stdoutUntilExit(instance);
    const facts = JSON.parse(output) as Record<string, unknown>;
    expect(facts).toMatchObject({
      uid: 10001,
      gid: 10001,
      capEff: '0000000000000000',
      noNewPrivs: '1',
      rootWrite: 'EROFS',
      tmpExec: 'EACCES',
      interfaces: ['lo'],
    });
    expect(facts.nofile).toMatch(/Max open files\s+256\s+256/);
  });
});

describe('DockerSandbox stdio', () => {
  it('delivers output written before anyone listened', async () => {
    const instance = await newDriver().start(
      smallSpec({ command: ['node', '-e', 'console.log("early")'] }),
    );
    await instance.exited; // everything it wrote arrived while nobody listened
    expect(await collectLines(instance).next()).toBe('early');
  });

  it('echoes lines, large ones across many frames, and many one at a time intact and in order', async () => {
    const instance = await newDriver().start(smallSpec());
    const lines = collectLines(instance);
    expect(JSON.parse(await lines.next())).toMatchObject({ type: 'ready', protocol: 1 });
    const big = 'x'.repeat(200_000); // crosses many frames and socket chunks
    instance.write(`hello\n${big}\n`);
    expect(await lines.next()).toBe('hello');
    expect(await lines.next()).toBe(big);
    // One line in flight at a time: a line held back, batched with the next or reordered fails.
    for (let call = 0; call < 200; call++) {
      const line = `{"type":"reply","invocation":"echo","call":${call},"ok":true,"value":${call}}`;
      instance.write(`${line}\n`);
      expect(await lines.next()).toBe(line);
    }
    await instance.kill();
  });

  it('reports its own exit with code and stderr tail, and removes the container', async () => {
    const driver = newDriver();
    const instance = await driver.start(
      smallSpec({ command: ['node', '-e', "console.error('something broke'); process.exit(3)"] }),
    );
    const exit = await instance.exited;
    expect(exit).toMatchObject({ exitCode: 3, oomKilled: false });
    expect(exit.signal).toBeUndefined();
    expect(exit.stderrTail).toContain('something broke');
    expect(await driver.client.inspect(instance.id)).toBeUndefined();
  });

  it('kill() is idempotent, kills with SIGKILL (no grace period), and exited says so', async () => {
    const driver = newDriver();
    const instance = await driver.start(smallSpec());
    await Promise.all([instance.kill(), instance.kill()]);
    await instance.kill();
    const exit = await instance.exited;
    expect(exit).toMatchObject({ exitCode: 137, signal: 'SIGKILL', oomKilled: false });
    expect(await driver.client.inspect(instance.id)).toBeUndefined();
    // A dead instance refuses input loudly, so its caller fails at once instead of waiting.
    expect(() => instance.write('after death\n')).toThrow(/no longer takes input/);
  });

  it('reports the kernel OOM killer (memory outside the V8 heap)', async () => {
    const hog = 'const a = []; for (;;) a.push(Buffer.alloc(4 << 20, 1));';
    const instance = await newDriver().start(
      smallSpec({ memoryMb: 48, command: ['node', '-e', hog] }),
    );
    const exit = await instance.exited;
    expect(exit).toMatchObject({ exitCode: 137, oomKilled: true });
  });

  it('reports V8 heap exhaustion under the harness flags as out of memory', async () => {
    const hog = 'const a = []; for (;;) a.push(new Array(1e5).fill({ x: 1 }));';
    const instance = await newDriver().start(
      smallSpec({ memoryMb: 128, command: ['node', '--max-old-space-size=32', '-e', hog] }),
    );
    const exit = await instance.exited;
    expect(exit.oomKilled).toBe(true);
    expect(exit.exitCode).not.toBe(0);
    expect(exit.stderrTail).toMatch(/heap out of memory/i);
  });
});

describe('DockerSandbox lifecycle', () => {
  it('reaps only leftovers of the same plane from another driver instance', async () => {
    const planeName = uniquePlaneName('reap');
    const current = newDriver(planeName);
    const crashed = new DockerSandbox({ image, planeName }); // "forgotten": never closed
    const otherPlane = newDriver(uniquePlaneName('other'));

    const mine = await current.start(smallSpec());
    const leftover = await crashed.start(smallSpec());
    const foreign = await otherPlane.start(smallSpec());

    expect(await current.reapLeftovers()).toBe(1);
    expect(await current.client.inspect(leftover.id)).toBeUndefined();
    expect((await current.client.inspect(mine.id))?.State.Running).toBe(true);
    expect((await current.client.inspect(foreign.id))?.State.Running).toBe(true);
    expect((await leftover.exited).exitCode).not.toBe(0);
    expect(await current.reapLeftovers()).toBe(0);
  });

  it('leaves the runners of a control plane that still runs alone, and says so', async () => {
    const planeName = uniquePlaneName('shared');
    const warnings: string[] = [];
    const current = new DockerSandbox({
      image,
      planeName,
      killTimeoutMs: 5_000,
      warn: (message) => warnings.push(message),
    });
    drivers.push(current);
    // Another control plane on this host with the same PLANE_NAME: a live process of its own.
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    await once(other, 'spawn');
    const sibling = new DockerSandbox({
      image,
      planeName,
      killTimeoutMs: 5_000,
      owner: { host: hostname(), pid: other.pid! },
    });
    drivers.push(sibling);
    const remote = new DockerSandbox({
      image,
      planeName,
      killTimeoutMs: 5_000,
      owner: { host: 'another-host.example', pid: 1 },
    });
    drivers.push(remote);
    try {
      const siblings = await sibling.start(smallSpec());
      const remotes = await remote.start(smallSpec());

      expect(await current.reapLeftovers()).toBe(0);
      expect((await current.client.inspect(siblings.id))?.State.Running).toBe(true);
      expect((await current.client.inspect(remotes.id))?.State.Running).toBe(true);
      expect(warnings).toHaveLength(2);
      expect(warnings.join('\n')).toMatch(
        new RegExp(`another control plane with PLANE_NAME=${planeName} is running`),
      );
      expect(warnings.join('\n')).toContain(`docker rm -f ${remotes.id.slice(0, 12)};`);
    } finally {
      other.kill('SIGKILL');
      await once(other, 'exit');
    }
    // Its process gone, its runners are leftovers like any other.
    expect(await current.reapLeftovers()).toBe(1);
  });

  it('judges each owner on its own labels: a forged container never decides for a live one', async () => {
    const planeName = uniquePlaneName('forged');
    const current = newDriver(planeName);
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    await once(other, 'spawn');
    const live = new DockerSandbox({
      image,
      planeName,
      killTimeoutMs: 5_000,
      owner: { host: hostname(), pid: other.pid! },
    });
    drivers.push(live);
    try {
      const running = await live.start(smallSpec());
      // Anyone who may create containers on the engine labels one with the live
      // instance's id and no owner: taken alone it counts as an old leftover.
      const docker = new Dockerode();
      const forged = await docker.createContainer({
        Image: image,
        Labels: { 'mcphost.plane': planeName, 'mcphost.plane-instance': live.planeInstance },
        HostConfig: { NetworkMode: 'none' },
      });
      expect(await current.reapLeftovers()).toBe(1);
      expect(await current.client.inspect(forged.id)).toBeUndefined();
      expect((await current.client.inspect(running.id))?.State.Running).toBe(true);
    } finally {
      other.kill('SIGKILL');
      await once(other, 'exit');
    }
  });

  it('close() kills every instance it started and refuses new ones', async () => {
    const driver = new DockerSandbox({ image, planeName: uniquePlaneName('close') });
    const instances = await Promise.all([driver.start(smallSpec()), driver.start(smallSpec())]);
    await driver.close();
    for (const instance of instances)
      expect(await driver.client.inspect(instance.id)).toBeUndefined();
    await expect(driver.start(smallSpec())).rejects.toMatchObject({ code: 'ERR_SHUTTING_DOWN' });
  });

  it('ping() and start() fail with ERR_SANDBOX_UNAVAILABLE when the engine is unreachable', async () => {
    const driver = new DockerSandbox({
      image,
      planeName: uniquePlaneName('bogus'),
      docker: new Dockerode({ socketPath: '/nonexistent/docker.sock' }),
    });
    const failure = await driver.ping().catch((error: unknown) => error);
    expect(isMcphostError(failure, 'ERR_SANDBOX_UNAVAILABLE')).toBe(true);
    expect((failure as Error).message).toMatch(/Docker engine: ping failed: .*ENOENT/);
    await expect(driver.start(smallSpec())).rejects.toMatchObject({
      code: 'ERR_SANDBOX_UNAVAILABLE',
    });
    await expect(newDriver().ping()).resolves.toBeUndefined();
  });

  it('rejects misuse of its own API with TypeError', () => {
    expect(() => new DockerSandbox({ image, planeName: 'has spaces' })).toThrow(TypeError);
    expect(() => new DockerSandbox({ image: '', planeName: 'ok' })).toThrow(TypeError);
    const driver = newDriver();
    return expect(driver.start(smallSpec({ pids: 0 }))).rejects.toThrow(TypeError);
  });
});
