/**
 * The pure parts of the load driver: how an answer is classified (a mix-up
 * must never pass as ok or as an ordinary error) and how percentiles are read.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { classifyResult, classifyThrown } from './support/classify-answer.js';
import { FigureCollector, percentile } from './support/load-figures.js';

const text = (value: string) => [{ type: 'text' as const, text: value }];

describe('classifyResult', () => {
  it('accepts only the call’s own token as ok', () => {
    expect(classifyResult({ content: text('tok-a-1') }, 'tok-a-1')).toEqual({ kind: 'ok' });
    expect(classifyResult({ content: text('tok-a-2') }, 'tok-a-1').kind).toBe('mixed-up');
    expect(classifyResult({ content: text('hello') }, 'tok-a-1').kind).toBe('wrong-answer');
  });

  it('counts another call’s token inside an error as a mix-up too', () => {
    const result = {
      isError: true,
      content: text('failed for tok-a-9'),
      _meta: { 'mcphost/errorCode': 'ERR_TOOL_ERROR' },
    };
    expect(classifyResult(result, 'tok-a-1').kind).toBe('mixed-up');
  });

  it('classifies errors by their stable code and calls one without code or message unclear', () => {
    const coded = {
      isError: true,
      content: text('no capacity: …'),
      _meta: { 'mcphost/errorCode': 'ERR_NO_CAPACITY' },
    };
    expect(classifyResult(coded, 'tok-x')).toEqual({
      kind: 'tool-error:ERR_NO_CAPACITY',
      message: 'no capacity: …',
    });
    expect(classifyResult({ isError: true, content: text('boom') }, 'tok-x').kind).toBe('unclear');
    expect(
      classifyResult(
        { isError: true, content: text(' '), _meta: { 'mcphost/errorCode': 'ERR_X' } },
        'tok-x',
      ).kind,
    ).toBe('unclear');
  });
});

describe('classifyThrown', () => {
  it('separates client timeouts, JSON-RPC errors and transport failures', () => {
    expect(classifyThrown(new McpError(ErrorCode.RequestTimeout, 'timed out')).kind).toBe(
      'timeout',
    );
    expect(classifyThrown(new McpError(ErrorCode.InvalidParams, 'Unknown tool: x')).kind).toBe(
      'rpc-error:-32602',
    );
    expect(classifyThrown(new TypeError('fetch failed'))).toEqual({
      kind: 'transport',
      message: 'fetch failed',
    });
  });
});

describe('figures', () => {
  it('reads nearest-rank percentiles', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 99)).toBe(99);
    expect(percentile(values, 100)).toBe(100);
    expect(percentile([], 50)).toBe(0);
  });

  it('counts ok and errors by kind, keeping the first message of each kind', () => {
    const collector = new FigureCollector();
    collector.add('ok', 10);
    collector.add('tool-error:ERR_NO_CAPACITY', 30, 'first');
    collector.add('tool-error:ERR_NO_CAPACITY', 20, 'second');
    const figures = collector.figures(1_000);
    expect(figures).toMatchObject({
      calls: 3,
      ok: 1,
      errorsByKind: { 'tool-error:ERR_NO_CAPACITY': 2 },
      exampleMessages: { 'tool-error:ERR_NO_CAPACITY': 'first' },
      p50Ms: 20,
      maxMs: 30,
      wallMs: 1_000,
    });
  });
});
