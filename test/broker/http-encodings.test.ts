/**
 * Bytes through the broker's http operation (what `fetch` uses): a request
 * body sent as base64 arrives as exactly those bytes, a response asked for as
 * base64 comes back as exactly the bytes sent, and the size limit counts raw
 * bytes, not their base64. Without the encodings (sdk.http) bodies are UTF-8
 * text, as before. A real loopback server that sees raw bytes.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressPolicy, type Broker } from '../../control-plane/broker/index.js';
import { brokerWithDefaults } from './broker-with-defaults.js';
import { context, failure } from './call-helpers.js';

/** Every byte value once, and bytes that are not UTF-8. */
const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const MAX_RESPONSE_BYTES = 3000;

let server: Server;
let origin: string;
let broker: Broker;
let requestCount = 0;

beforeAll(async () => {
  server = createServer((request, response) => {
    requestCount += 1;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received = Buffer.concat(chunks);
      const url = new URL(request.url ?? '/', 'http://x');
      if (url.pathname === '/digest') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            length: received.length,
            sha256: createHash('sha256').update(received).digest('hex'),
            contentType: request.headers['content-type'] ?? null,
          }),
        );
      } else if (url.pathname === '/bytes') {
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        response.end(ALL_BYTES);
      } else if (url.pathname === '/sized') {
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        response.end(Buffer.alloc(Number(url.searchParams.get('bytes')), 0xff));
      } else if (url.pathname === '/moved') {
        response.writeHead(307, { location: '/digest' }).end();
      } else {
        response.writeHead(404).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  broker = brokerWithDefaults({
    egress: EgressPolicy.fromAllowList(['127.0.0.1/32']),
    http: { totalTimeoutMs: 5_000, maxResponseBytes: MAX_RESPONSE_BYTES, maxRedirects: 3 },
  });
});

afterAll(async () => {
  await broker.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

describe('request bodies', () => {
  it('a base64 body arrives as exactly its bytes', async () => {
    const value = (await broker.handle(
      'http',
      {
        method: 'POST',
        url: `${origin}/digest`,
        headers: { 'content-type': 'application/octet-stream' },
        body: ALL_BYTES.toString('base64'),
        bodyEncoding: 'base64',
      },
      context(),
    )) as { status: number; body: string };
    expect(value.status).toBe(200);
    expect(JSON.parse(value.body)).toEqual({
      length: 256,
      sha256: sha256(ALL_BYTES),
      contentType: 'application/octet-stream',
    });
  });

  it('a text body (no encoding, as sdk.http sends) arrives as its UTF-8', async () => {
    const value = (await broker.handle(
      'http',
      { method: 'POST', url: `${origin}/digest`, body: 'wörld €' },
      context(),
    )) as { body: string };
    expect(JSON.parse(value.body)).toMatchObject({
      length: Buffer.byteLength('wörld €'),
      sha256: sha256(Buffer.from('wörld €')),
    });
  });

  it('the bytes are sent again after a 307 redirect', async () => {
    const value = (await broker.handle(
      'http',
      {
        method: 'PUT',
        url: `${origin}/moved`,
        body: ALL_BYTES.toString('base64'),
        bodyEncoding: 'base64',
      },
      context(),
    )) as { body: string };
    expect(JSON.parse(value.body)).toMatchObject({ length: 256, sha256: sha256(ALL_BYTES) });
  });

  it('a body that is not base64 is refused before any request', async () => {
    const before = requestCount;
    const error = await failure(
      broker.handle(
        'http',
        { method: 'POST', url: `${origin}/digest`, body: 'not base64!', bodyEncoding: 'base64' },
        context(),
      ),
    );
    expect(error.code).toBe('ERR_INVALID_ARGUMENT');
    expect(error.message).toMatch(/not base64/);
    expect(requestCount).toBe(before);
  });
});

describe('attack review', () => {
  it('a body of megabytes of base64 is checked without overflowing the stack', async () => {
    const bytes = Buffer.alloc(10 * 1024 * 1024, 0xab);
    const value = (await broker.handle(
      'http',
      {
        method: 'POST',
        url: `${origin}/digest`,
        body: bytes.toString('base64'),
        bodyEncoding: 'base64',
      },
      context(),
    )) as { body: string };
    expect(JSON.parse(value.body)).toMatchObject({ length: bytes.length, sha256: sha256(bytes) });
  });

  it('refuses the headers the broker sets, Host above all, before any request', async () => {
    const before = requestCount;
    for (const name of ['host', 'Host', 'content-length', 'transfer-encoding', 'connection']) {
      const error = await failure(
        broker.handle(
          'http',
          { method: 'GET', url: `${origin}/digest`, headers: { [name]: 'other.example' } },
          context(),
        ),
      );
      expect(error.code, name).toBe('ERR_INVALID_ARGUMENT');
      expect(error.message).toContain(`the ${name} header is set by the broker`);
    }
    expect(requestCount).toBe(before);
  });
});

describe('response bodies', () => {
  it('responseEncoding base64 gives the exact bytes', async () => {
    const value = (await broker.handle(
      'http',
      { url: `${origin}/bytes`, responseEncoding: 'base64' },
      context(),
    )) as { status: number; headers: Record<string, string>; body: string };
    expect(value.status).toBe(200);
    expect(value.headers['content-type']).toBe('application/octet-stream');
    expect(Buffer.from(value.body, 'base64').equals(ALL_BYTES)).toBe(true);
  });

  it('without it the body is UTF-8 text, invalid bytes replaced (sdk.http unchanged)', async () => {
    const value = (await broker.handle('http', { url: `${origin}/bytes` }, context())) as {
      body: string;
    };
    expect(value.body).toBe(ALL_BYTES.toString('utf8'));
    expect(value.body).toContain('\ufffd');
  });

  it('the size limit counts raw bytes, not their base64', async () => {
    const exact = (await broker.handle(
      'http',
      { url: `${origin}/sized?bytes=${MAX_RESPONSE_BYTES}`, responseEncoding: 'base64' },
      context(),
    )) as { body: string };
    // Its base64 is a third longer than the limit, and still allowed.
    expect(exact.body.length).toBeGreaterThan(MAX_RESPONSE_BYTES);
    expect(Buffer.from(exact.body, 'base64')).toHaveLength(MAX_RESPONSE_BYTES);
    const error = await failure(
      broker.handle(
        'http',
        { url: `${origin}/sized?bytes=${MAX_RESPONSE_BYTES + 1}`, responseEncoding: 'base64' },
        context(),
      ),
    );
    expect(error.code).toBe('ERR_HTTP_TOO_LARGE');
  });
});
