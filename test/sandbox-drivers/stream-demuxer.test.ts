/** StreamDemuxer: Docker's 8-byte-header framing, cut at every possible place. */
import { describe, expect, it } from 'vitest';
import {
  StreamDemuxer,
  type OutputStream,
} from '../../control-plane/sandbox/docker/stream-demuxer.js';

function frame(type: number, payload: string): Buffer {
  const body = Buffer.from(payload);
  const header = Buffer.alloc(8);
  header[0] = type;
  header.writeUInt32BE(body.length, 4);
  return Buffer.concat([header, body]);
}

function demux(chunks: Buffer[]): Record<OutputStream, string> {
  const out: Record<OutputStream, Buffer[]> = { stdout: [], stderr: [] };
  const demuxer = new StreamDemuxer((stream, payload) => out[stream].push(Buffer.from(payload)));
  for (const chunk of chunks) demuxer.push(chunk);
  return {
    stdout: Buffer.concat(out.stdout).toString(),
    stderr: Buffer.concat(out.stderr).toString(),
  };
}

const stream = Buffer.concat([
  frame(1, '{"type":"ready"}\n'),
  frame(2, 'warning: é\n'),
  frame(1, ''),
  frame(0, 'stdin-echo'),
  frame(1, 'x'.repeat(70_000)),
  frame(2, 'bye'),
]);
const expected = {
  stdout: `{"type":"ready"}\nstdin-echo${'x'.repeat(70_000)}`,
  stderr: 'warning: é\nbye',
};

describe('StreamDemuxer', () => {
  it('splits a whole stream in one chunk', () => {
    expect(demux([stream])).toEqual(expected);
  });

  it('gives the same result whatever two pieces the socket cuts the stream into', () => {
    for (let cut = 0; cut <= 80; cut++) {
      expect(demux([stream.subarray(0, cut), stream.subarray(cut)])).toEqual(expected);
    }
  });

  it('gives the same result when fed one byte at a time', () => {
    const bytes = [...stream.subarray(0, 200)].map((byte) => Buffer.from([byte]));
    const head = demux([stream.subarray(0, 200)]);
    expect(demux(bytes)).toEqual(head);
    expect(head.stdout.startsWith('{"type":"ready"}\nstdin-echo')).toBe(true);
    expect(head.stderr).toBe('warning: é\n');
  });
});
