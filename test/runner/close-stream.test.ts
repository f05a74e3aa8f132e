/**
 * `sdk.closeStream()` from tool code to the calling client: the harness sends
 * one `disconnect` line per invocation, in order with the tool's other output,
 * never after the call ended and never as an error in the tool; the invoker,
 * with the real harness in a real container, hands it to
 * `CallingClient.closeStream` once while the call still runs, and a call with
 * no client (an admin test run) or a client that cannot resume runs as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ToolInvoker,
  type InvocableTool,
  type InvokeRequest,
  type InvokerPorts,
} from '../../control-plane/invocation/tool-invoker.js';
import type { CallingClient } from '../../control-plane/invocation/calling-client.js';
import { McphostError } from '../../control-plane/errors.js';
import { createLogger } from '../../control-plane/logger.js';
import type { SandboxManager } from '../../control-plane/sandbox/sandbox-manager.js';
import type { DockerSandbox } from '../../control-plane/sandbox/docker/docker-sandbox.js';
import { buildHarness } from '../../scripts/build-harness.js';
import type { HarnessMessage } from '../../src/protocol/index.js';
import { dockerManager, runnerImage, uniquePlaneName } from '../sandbox/docker-helpers.js';
import { DEFAULT_INVOCATION_LIMITS, DEFAULT_SCHEMA_CHECKS } from '../support/config-defaults.js';
import { HarnessClient } from './harness-client.js';

describe('the harness', () => {
  let harness: HarnessClient;

  beforeAll(async () => {
    const { harnessPath } = await buildHarness();
    harness = await HarnessClient.start(harnessPath, ['--experimental-vm-modules']);
  });

  afterAll(async () => {
    await harness?.close();
    expect(harness.faults).toEqual([]);
  });

  /** The types of the lines one invocation wrote, in order. */
  function linesOf(id: string): HarnessMessage['type'][] {
    return harness.messages
      .filter((message) => 'invocation' in message && message.invocation === id)
      .map((message) => message.type);
  }

  it('sends one disconnect line, where the tool called it, however often it calls it', async () => {
    const outcome = await harness.invoke(
      `console.log('before');
       const answers = [sdk.closeStream(), sdk.closeStream('ignored', 2)];
       console.log('after');
       await new Promise((resolve) => setTimeout(resolve, 5));
       answers.push(sdk.closeStream());
       return answers.map((answer) => typeof answer);`,
      { id: 'close-once' },
    );
    expect(outcome.result).toMatchObject({
      ok: true,
      value: ['undefined', 'undefined', 'undefined'],
    });
    expect(linesOf('close-once')).toEqual(['log', 'disconnect', 'log', 'result']);
  });

  it('sends it again for the next invocation: once is per invocation, not per harness', async () => {
    await harness.invoke('sdk.closeStream(); return 1;', { id: 'close-first' });
    await harness.invoke('sdk.closeStream(); sdk.closeStream(); return 2;', { id: 'close-next' });
    expect(linesOf('close-first')).toEqual(['disconnect', 'result']);
    expect(linesOf('close-next')).toEqual(['disconnect', 'result']);
  });

  it('sends nothing when the tool does not call it, nor after the call ended', async () => {
    const outcome = await harness.invoke(
      'setTimeout(() => sdk.closeStream(), 0); Promise.resolve().then(() => 0); return 1;',
      { id: 'close-late' },
    );
    expect(outcome.result).toMatchObject({ ok: true, value: 1 });
    // Long enough for the timer to have fired, had the ended invocation kept it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(linesOf('close-late')).toEqual(['result']);
  });

  it('is a function of the frozen sdk, like the others', async () => {
    const outcome = await harness.invoke(
      `const before = sdk.closeStream;
       try { sdk.closeStream = () => { throw new Error('replaced'); }; } catch {}
       return [typeof before, sdk.closeStream === before, Object.isFrozen(sdk)];`,
    );
    expect(outcome.result).toMatchObject({ ok: true, value: ['function', true, true] });
  });
});

describe('the invoker, with the real harness in a container', () => {
  let driver: DockerSandbox;
  let sandbox: SandboxManager;
  let invoker: ToolInvoker;

  beforeAll(async () => {
    ({ driver, sandbox } = dockerManager(await runnerImage(), uniquePlaneName('close-stream')));
    const ports: InvokerPorts = {
      sandbox,
      broker: {
        handle: () => Promise.reject(new McphostError('ERR_INTERNAL', 'no broker in this test')),
        endInvocation: async () => {},
      },
      secrets: () => ({}),
      server: () => undefined,
      log: { append: () => {}, countRefusal: () => {} },
      metrics: { invocation: () => {}, brokerRequest: () => {}, refusal: () => {} },
      logger: createLogger('silent'),
    };
    invoker = new ToolInvoker(ports, DEFAULT_INVOCATION_LIMITS, DEFAULT_SCHEMA_CHECKS);
  }, 180_000);

  afterAll(async () => {
    await invoker?.close();
    await sandbox?.close();
    await driver?.close();
  });

  const tool: InvocableTool = {
    subdomain: 'close-stream',
    name: 'wait',
    version: 1,
    description: '',
    code: `sdk.closeStream();
           await new Promise((resolve) => setTimeout(resolve, 100));
           sdk.closeStream();
           sdk.closeStream();
           return 'waited';`,
    parameters: [],
    secrets: [],
    limits: {},
    strict: false,
  };

  function request(client?: CallingClient): InvokeRequest {
    return {
      tool,
      args: {},
      caller: { kind: 'anonymous' },
      requestId: 'close-stream-test',
      ...(client === undefined ? {} : { client }),
    };
  }

  const noRequests = (): Promise<unknown> =>
    Promise.reject(new McphostError('ERR_CLIENT_UNSUPPORTED', 'no requests in this test'));

  it('calls CallingClient.closeStream once, while the call still runs', async () => {
    let running = true;
    const seen: boolean[] = [];
    const client: CallingClient = {
      closeStream() {
        seen.push(running);
      },
      request: noRequests,
    };
    const result = await invoker.invoke(request(client));
    running = false;
    expect(result).toMatchObject({ ok: true, value: 'waited' });
    expect(seen).toEqual([true]);
  });

  it('runs the call as before without a client (a test run) or with one that cannot resume', async () => {
    expect(await invoker.invoke(request())).toMatchObject({ ok: true, value: 'waited' });
    const withoutCloseStream: CallingClient = { request: noRequests };
    expect(await invoker.invoke(request(withoutCloseStream))).toMatchObject({
      ok: true,
      value: 'waited',
    });
  });

  it('keeps the call when the client throws: ending the stream is advisory', async () => {
    const client: CallingClient = {
      closeStream() {
        throw new Error('the transport refused');
      },
      request: noRequests,
    };
    expect(await invoker.invoke(request(client))).toMatchObject({ ok: true, value: 'waited' });
  });
});
