/**
 * Held answers (http/error-response.ts): the admin side holds an audited
 * write's answer until its audit entry is written, so whoever learns of a
 * change can already read its entry. Checked on a real loopback server.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  holdAnswer,
  releaseHeldAnswer,
  sendJson,
  sendNoContent,
  writeAnswer,
} from '../../../control-plane/http/error-response.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

/** Serves one request with `handle`, returning the status, headers and body the client saw. */
async function answerOf(handle: Parameters<typeof createServer>[1]) {
  server = createServer(handle);
  await new Promise<void>((ready) => server!.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  const response = await fetch(`http://127.0.0.1:${port}/`);
  return { status: response.status, headers: response.headers, body: await response.text() };
}

describe('held answers', () => {
  it('writes nothing until released, then exactly the answer held', async () => {
    const seen: string[] = [];
    const answer = await answerOf((_req, res) => {
      holdAnswer(res);
      sendJson(res, 201, { made: true }, { location: '/x' });
      seen.push(`after send: headersSent=${res.headersSent}`);
      const held = releaseHeldAnswer(res)!;
      seen.push(`held ${held.status}`);
      writeAnswer(res, held);
    });
    expect(seen).toEqual(['after send: headersSent=false', 'held 201']);
    expect(answer.status).toBe(201);
    expect(answer.headers.get('location')).toBe('/x');
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(JSON.parse(answer.body)).toEqual({ made: true });
  });

  it('holds a 204 with its headers and no body', async () => {
    const answer = await answerOf((_req, res) => {
      holdAnswer(res);
      sendNoContent(res, { 'set-cookie': 'a=; Max-Age=0' });
      expect(res.headersSent).toBe(false);
      writeAnswer(res, releaseHeldAnswer(res)!);
    });
    expect(answer.status).toBe(204);
    expect(answer.headers.get('set-cookie')).toBe('a=; Max-Age=0');
    expect(answer.body).toBe('');
  });

  it('writes at once on a response that holds nothing, and after release', async () => {
    const answer = await answerOf((_req, res) => {
      holdAnswer(res);
      expect(releaseHeldAnswer(res)).toBeUndefined();
      sendJson(res, 200, { direct: true });
      expect(res.headersSent).toBe(true);
    });
    expect(JSON.parse(answer.body)).toEqual({ direct: true });
  });
});
