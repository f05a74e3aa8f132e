/**
 * The harness side of rich results, progress, elicitation and sampling: what
 * goes on the wire for each, and that nothing a tool builds can put a line on
 * it that the control plane would refuse (which would fault the container).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHarness } from '../../scripts/build-harness.js';
import { ContentBlock, HarnessMessage } from '../../src/protocol/index.js';
import { errorOf, HarnessClient } from './harness-client.js';

let harness: HarnessClient;

beforeAll(async () => {
  const { harnessPath } = await buildHarness();
  harness = await HarnessClient.start(harnessPath, ['--experimental-vm-modules']);
});

afterAll(async () => {
  await harness?.close();
  // Every line the harness wrote parsed against the protocol: no fault, no exit.
  expect(harness.faults).toEqual([]);
});

describe('content results', () => {
  it('sends the blocks beside a null value', async () => {
    const outcome = await harness.invoke(
      "return [sdk.content.text('hi'), sdk.content.image('AAAA', 'image/png')];",
    );
    expect(outcome.result).toMatchObject({
      ok: true,
      value: null,
      content: [
        { type: 'text', text: 'hi' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      ],
    });
  });

  it('reads each element of a returned array once, so a getter cannot swap a block for bad data', async () => {
    const code = `
      let reads = 0;
      const good = sdk.content.image('AAAA', 'image/png');
      const result = [];
      Object.defineProperty(result, 0, {
        enumerable: true,
        get() { reads++; return reads === 1 ? good : { type: 'image', data: 'not base64!', mimeType: 'x' }; },
      });
      setTimeout(() => console.log('reads', reads), 0);
      return result;`;
    const outcome = await harness.invoke(code);
    expect(outcome.result).toMatchObject({
      ok: true,
      content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }],
    });
  });

  it('serialises blocks without consulting a toJSON the tool planted', async () => {
    const outcome = await harness.invoke(`
      Object.prototype.toJSON = () => { throw new Error('planted'); };
      Array.prototype.toJSON = () => 1n;
      String.prototype.toJSON = () => 'swapped';
      return [sdk.content.text('hi'), sdk.content.resource({ uri: 'a:b', mimeType: 'text/plain', text: 't' })];`);
    expect(outcome.result).toMatchObject({
      ok: true,
      content: [
        { type: 'text', text: 'hi' },
        { type: 'resource', resource: { uri: 'a:b', mimeType: 'text/plain', text: 't' } },
      ],
    });
  });

  it('fails at once, not at the deadline, when reading the result throws', async () => {
    const started = Date.now();
    const outcome = await harness.invoke(
      `const result = [sdk.content.text('a')];
       Object.defineProperty(result, 1, { enumerable: true, get() { throw new Error('getter says no'); } });
       return result;`,
      { timeoutMs: 5_000 },
    );
    expect(errorOf(outcome)).toMatchObject({ code: 'ERR_TOOL_ERROR', message: 'getter says no' });
    // Far below the 5 s time limit: the failure is the tool's answer, not a timeout.
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it('checks megabytes of base64 without overflowing the stack', async () => {
    const outcome = await harness.invoke(
      `const data = 'QUJD'.repeat(2 * 1024 * 1024);
       try { sdk.content.image(data + '!', 'image/png'); return 'accepted'; } catch (e) { return e.message; }`,
    );
    expect(outcome.result).toMatchObject({
      ok: true,
      value: 'sdk.content.image: data must be base64 text (btoa gives it)',
    });
  });

  it('keeps blocks frozen and the brand out of reach', async () => {
    const outcome = await harness.invoke(`
      const block = sdk.content.text('x');
      'use strict';
      let changed = true;
      try { block.text = 'y'; changed = block.text === 'y'; } catch { changed = false; }
      const copy = { ...block };
      return { changed, frozen: Object.isFrozen(block), copyIsData: JSON.stringify(copy), keys: Object.keys(sdk.content) };`);
    expect(outcome.result).toMatchObject({
      ok: true,
      value: {
        changed: false,
        frozen: true,
        copyIsData: '{"type":"text","text":"x"}',
        keys: ['text', 'image', 'audio', 'resource'],
      },
    });
  });

  it('counts the encoded content against the result limit', async () => {
    const outcome = await harness.invoke("return sdk.content.text('x'.repeat(2000));", {
      limits: { maxResultBytes: 1000 },
    });
    expect(errorOf(outcome).code).toBe('ERR_RESULT_TOO_LARGE');
  });

  it('checks builder arguments where the tool calls them', async () => {
    const outcome = await harness.invoke(`
      const attempts = [
        () => sdk.content.text(1),
        () => sdk.content.image('AAAA', 'png'),
        () => sdk.content.audio('AAA', 'audio/wav'),
        () => sdk.content.resource({ uri: 'relative/path', text: 'x' }),
        () => sdk.content.resource({ uri: 'a:b', text: 'x', blob: 'AAAA' }),
        () => sdk.content.resource(null),
      ];
      return attempts.map((attempt) => { try { attempt(); return 'accepted'; } catch (e) { return e.message; } });`);
    expect(outcome.result).toMatchObject({
      ok: true,
      value: [
        'sdk.content.text expects a string',
        'sdk.content.image: mimeType must be a MIME type',
        'sdk.content.audio: data must be base64 text (btoa gives it)',
        'sdk.content.resource: uri must be an absolute URI',
        'sdk.content.resource needs exactly one of text and blob',
        'sdk.content.resource expects {uri, mimeType?, text | blob}',
      ],
    });
  });
});

describe('progress', () => {
  const steps = 'for (let i = 1; i <= 3; i++) sdk.progress(i, 3, "step " + i); return "done";';

  it('sends one line per call when the caller asked for progress', async () => {
    const outcome = await harness.invoke(steps, { progress: true });
    expect(
      outcome.progress.map(({ progress, total, message }) => [progress, total, message]),
    ).toEqual([
      [1, 3, 'step 1'],
      [2, 3, 'step 2'],
      [3, 3, 'step 3'],
    ]);
  });

  it('sends nothing when the caller did not', async () => {
    const outcome = await harness.invoke(steps);
    expect(outcome.progress).toEqual([]);
    expect(outcome.result).toMatchObject({ ok: true, value: 'done' });
  });

  it('sends at most as many notifications as console lines are allowed', async () => {
    const outcome = await harness.invoke(
      'for (let i = 1; i <= 50; i++) sdk.progress(i); return 1;',
      {
        progress: true,
        limits: { maxLogEntries: 10 },
      },
    );
    expect(outcome.progress).toHaveLength(10);
  });

  it('charges the encoded bytes too, and cuts long messages', async () => {
    // Control characters take six bytes each once escaped in JSON.
    const outcome = await harness.invoke(
      "for (let i = 1; i <= 100; i++) sdk.progress(i, 100, '\\u0001'.repeat(4096)); return 1;",
      { progress: true, limits: { maxLogBytes: 32 * 1024 } },
    );
    const bytes = outcome.progress.reduce((sum, m) => sum + JSON.stringify(m).length, 0);
    expect(outcome.progress.length).toBeGreaterThan(0);
    expect(outcome.progress.length).toBeLessThan(100);
    expect(bytes).toBeLessThanOrEqual(32 * 1024);
    expect(outcome.progress[0]?.message).toHaveLength(1024);
  });

  it('refuses values MCP does not allow', async () => {
    const outcome = await harness.invoke(`
      const attempts = [
        () => sdk.progress('1'),
        () => sdk.progress(NaN),
        () => sdk.progress(Infinity),
        () => sdk.progress(1, 'ten'),
        () => sdk.progress(1, 10, 42),
        () => { sdk.progress(5); sdk.progress(5); },
      ];
      return attempts.map((attempt) => { try { attempt(); return 'accepted'; } catch (e) { return e.name + ': ' + e.message; } });`);
    expect(outcome.result).toMatchObject({
      ok: true,
      value: [
        'TypeError: sdk.progress: progress must be a finite number',
        'TypeError: sdk.progress: progress must be a finite number',
        'TypeError: sdk.progress: progress must be finite',
        'TypeError: sdk.progress: total must be a finite number when given',
        'TypeError: sdk.progress: message must be a string when given',
        'RangeError: sdk.progress: progress must increase with each call (it was 5, now 5)',
      ],
    });
  });
});

describe('elicitation and sampling', () => {
  it('are calls to the client whose replies reach the tool', async () => {
    const outcome = await harness.invoke(
      `const answer = await sdk.elicit('Name?', { type: 'object', properties: {} });
       const reply = await sdk.sample({ messages: [], maxTokens: 5 });
       return { answer, reply };`,
      {
        onCall: (call) =>
          call.op === 'client.elicit'
            ? { ok: true, value: { action: 'accept', content: { name: 'Ada' } } }
            : {
                ok: true,
                value: { role: 'assistant', model: 'm', content: { type: 'text', text: 'hi' } },
              },
      },
    );
    expect(outcome.calls.map((call) => [call.op, call.args])).toEqual([
      ['client.elicit', { message: 'Name?', requestedSchema: { type: 'object', properties: {} } }],
      ['client.sample', { messages: [], maxTokens: 5 }],
    ]);
    expect(outcome.result).toMatchObject({
      ok: true,
      value: {
        answer: { action: 'accept', content: { name: 'Ada' } },
        reply: { role: 'assistant', model: 'm', content: { type: 'text', text: 'hi' } },
      },
    });
  });
});

describe('the wire', () => {
  it('holds only lines the protocol accepts', () => {
    for (const message of harness.messages)
      expect(HarnessMessage.safeParse(message).success).toBe(true);
    const blocks = harness.messages.flatMap((m) =>
      m.type === 'result' && m.ok ? (m.content ?? []) : [],
    );
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) expect(ContentBlock.safeParse(block).success).toBe(true);
  });
});

describe('web platform edges (attack review)', () => {
  it('a timeout signal past the longest timer does not fire at once; SharedArrayBuffer views are refused by name; timeOrigin is coarse', async () => {
    const outcome = await harness.invoke(`
      const signal = AbortSignal.timeout(2 ** 31);
      await new Promise((resolve) => setTimeout(resolve, 30));
      let shared;
      try { crypto.getRandomValues(new Uint8Array(new SharedArrayBuffer(8))); shared = 'filled'; }
      catch (e) { shared = e.name + ': ' + e.message; }
      return { aborted: signal.aborted, shared, coarse: Number.isInteger(performance.timeOrigin * 200) };`);
    expect(outcome.result).toMatchObject({
      ok: true,
      value: {
        aborted: false,
        shared:
          'TypeMismatchError: crypto.getRandomValues: the argument must not be a view of a SharedArrayBuffer',
        coarse: true,
      },
    });
  });
});
