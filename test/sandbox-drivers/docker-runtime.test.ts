/**
 * SandboxSpec.runtime on the real engine: the container records the runtime
 * asked for and really runs under it (gVisor answers with its own kernel,
 * 4.4.0), the hardening holds under each runtime, and a runtime the engine
 * lacks fails the start with ERR_SANDBOX_UNAVAILABLE naming what the engine has.
 */
import { release } from 'node:os';
import { randomUUID } from 'node:crypto';
import type Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMcphostError } from '../../control-plane/errors.js';
import {
  DockerodeContainerClient,
  type ContainerClient,
} from '../../control-plane/sandbox/docker/container-client.js';
import { DockerSandbox } from '../../control-plane/sandbox/docker/docker-sandbox.js';
import { GVISOR_SANDBOX_TASKS } from '../../control-plane/sandbox/docker/hardened-container-config.js';
import { describeEachRuntime, ENGINE_RUNTIMES } from '../support/oci-runtimes.js';
import { ensureEchoRunnerImage, smallSpec, stdoutUntilExit, uniquePlaneName } from './helpers.js';

let image: string;
const drivers: DockerSandbox[] = [];

function newDriver(client?: ContainerClient): DockerSandbox {
  const planeName = uniquePlaneName('runtime');
  const driver = new DockerSandbox({
    image,
    planeName,
    killTimeoutMs: 5_000,
    ...(client ? { client } : {}),
  });
  drivers.push(driver);
  return driver;
}

beforeAll(async () => {
  image = await ensureEchoRunnerImage();
});

afterAll(async () => {
  await Promise.all(drivers.map((driver) => driver.close()));
});

const KERNEL_PROBE = `console.log(JSON.stringify({
  release: require('os').release(),
  version: require('fs').readFileSync('/proc/version', 'utf8').trim(),
}));`;

const HARDENING_PROBE = `
  const fs = require('fs'), os = require('os');
  const status = fs.readFileSync('/proc/self/status', 'utf8');
  const field = (name) => (status.match(new RegExp('^' + name + ':\\\\s*(\\\\S+)', 'm')) || [])[1];
  const root = fs.readFileSync('/proc/mounts', 'utf8').split('\\n').find((line) => line.split(' ')[1] === '/');
  let tmpExec = 'ran';
  fs.writeFileSync('/tmp/probe.sh', '#!/bin/sh\\necho escaped\\n', { mode: 0o755 });
  try { require('child_process').execFileSync('/tmp/probe.sh'); } catch (e) { tmpExec = e.code; }
  console.log(JSON.stringify({
    uid: process.getuid(), capEff: field('CapEff'), noNewPrivs: field('NoNewPrivs') ?? null,
    rootOptions: root.split(' ')[3].split(','), tmpExec, interfaces: Object.keys(os.networkInterfaces()),
  }));`;

describe('DockerSandbox.runtimes()', () => {
  it("lists the engine's registered runtimes, runc among them", async () => {
    const runtimes = await newDriver().runtimes();
    expect(runtimes).toContain('runc');
    expect(runtimes).toEqual([...ENGINE_RUNTIMES]);
  });
});

describeEachRuntime('DockerSandbox with runtime', (runtime) => {
  it('records the runtime on the container (HostConfig.Runtime)', async () => {
    const driver = newDriver();
    const instance = await driver.start(smallSpec({ runtime }));
    const info = await driver.client.inspect(instance.id);
    expect(info?.HostConfig.Runtime).toBe(runtime);
    await instance.kill();
  });

  it("gives the tool its pids limit, and gVisor's own threads room beyond it", async () => {
    // 16 tasks: below what an idle runsc sandbox holds on its own (45).
    const instance = await newDriver().start(
      smallSpec({ runtime, pids: 16, command: ['node', '-e', "console.log('x'.repeat(1 << 20))"] }),
    );
    const info = await newDriver().client.inspect(instance.id);
    expect(info?.HostConfig.PidsLimit).toBe(runtime === 'runsc' ? 16 + GVISOR_SANDBOX_TASKS : 16);
    expect((await stdoutUntilExit(instance)).length).toBeGreaterThanOrEqual(1 << 20);
  });

  it('really runs under it: the kernel a process inside sees', async () => {
    const instance = await newDriver().start(
      smallSpec({ runtime, command: ['node', '-e', KERNEL_PROBE] }),
    );
    const kernel = JSON.parse(await stdoutUntilExit(instance)) as {
      release: string;
      version: string;
    };
    if (runtime === 'runsc') {
      // gVisor's Sentry implements Linux itself and reports 4.4.0, whatever the host runs.
      expect(kernel.release).toBe('4.4.0');
      expect(kernel.release).not.toBe(release());
    } else {
      expect(kernel.release).toBe(release());
    }
  });

  it('keeps the hardening: non-root, no capabilities, read-only root, noexec /tmp, no network', async () => {
    const instance = await newDriver().start(
      smallSpec({ runtime, command: ['node', '-e', HARDENING_PROBE] }),
    );
    const facts = JSON.parse(await stdoutUntilExit(instance)) as Record<string, unknown>;
    expect(facts).toMatchObject({
      uid: 10001,
      capEff: '0000000000000000',
      rootOptions: expect.arrayContaining(['ro']),
      tmpExec: 'EACCES',
      interfaces: ['lo'],
    });
    // gVisor's /proc does not show the NoNewPrivs field; runsc applies the OCI flag all the same.
    expect(facts.noNewPrivs).toBe(runtime === 'runsc' ? null : '1');
  });
});

/**
 * The real engine, seen as one without gVisor: `runtimes()` leaves runsc out
 * and a runsc container is created under a name no engine has, so the
 * engine's own refusal is what the driver must explain.
 */
class EngineWithoutRunsc extends DockerodeContainerClient {
  override async runtimes(): Promise<string[]> {
    return (await super.runtimes()).filter((name) => name !== 'runsc');
  }

  override async create(options: Dockerode.ContainerCreateOptions): Promise<string> {
    const host = options.HostConfig ?? {};
    const runtime = host.Runtime === 'runsc' ? `mcphost-absent-${randomUUID()}` : host.Runtime;
    return super.create({ ...options, HostConfig: { ...host, Runtime: runtime } });
  }
}

describe('a runtime the engine lacks', () => {
  it('fails the start with ERR_SANDBOX_UNAVAILABLE naming the runtimes the engine has', async () => {
    const driver = newDriver(new EngineWithoutRunsc());
    const failure = await driver.start(smallSpec({ runtime: 'runsc' })).catch((error) => error);
    expect(isMcphostError(failure, 'ERR_SANDBOX_UNAVAILABLE')).toBe(true);
    expect((failure as Error).message).toMatch(
      /^the sandbox engine has no runtime "runsc" \(it has: (.+, )?runc(, .+)?\); install gVisor/,
    );
    expect((failure as Error).message).not.toMatch(/, runsc/);
    // Nothing was left on the engine.
    const left = await driver.client.listByLabels({ 'mcphost.pool': 'test' });
    expect(
      left.filter(
        (container) => container.labels['mcphost.plane-instance'] === driver.planeInstance,
      ),
    ).toEqual([]);
  });

  it('still runs runc containers on that engine', async () => {
    const driver = newDriver(new EngineWithoutRunsc());
    const instance = await driver.start(smallSpec({ runtime: 'runc' }));
    expect((await driver.client.inspect(instance.id))?.HostConfig.Runtime).toBe('runc');
    await instance.kill();
  });
});
