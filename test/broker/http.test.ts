import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Broker, EgressPolicy } from '../../control-plane/broker/index.js';
import { brokerWithDefaults } from './broker-with-defaults.js';
import { startLoopbackServer, type LoopbackServer } from '../support/loopback-server.js';
import { context, failure } from './call-helpers.js';

describe('sdk.http through the broker', () => {
  let server: LoopbackServer;
  let broker: Broker;

  beforeAll(async () => {
    server = await startLoopbackServer((request, response, body) => {
      const url = new URL(request.url ?? '/', 'http://x');
      if (url.pathname === '/echo') {
        response.setHeader('content-type', 'application/json');
        response.setHeader('x-reply', ['one', 'two']);
        response.end(
          JSON.stringify({
            method: request.method,
            headers: request.headers,
            body,
            query: url.search,
          }),
        );
      } else if (url.pathname === '/status') {
        response.statusCode = Number(url.searchParams.get('code'));
        response.end(`status ${response.statusCode}`);
      } else if (url.pathname === '/hang') {
        // Never answers.
      } else if (url.pathname === '/big') {
        const size = Number(url.searchParams.get('bytes'));
        if (url.searchParams.has('length')) response.setHeader('content-length', size);
        response.end(Buffer.alloc(size, 'a'));
      } else if (url.pathname === '/endless') {
        const chunk = Buffer.alloc(64 * 1024, 'z');
        const pump = (): void => {
          while (!response.destroyed && response.write(chunk));
          if (!response.destroyed) response.once('drain', pump);
        };
        pump();
      } else if (url.pathname.startsWith('/hops/')) {
        const left = Number(url.pathname.slice('/hops/'.length));
        if (left === 0) response.end('arrived');
        else response.writeHead(302, { location: `/hops/${left - 1}` }).end();
      } else if (url.pathname === '/see-other') {
        response.writeHead(303, { location: '/echo' }).end();
      } else if (url.pathname === '/webhook') {
        if (request.headers['x-webhook-secret'] !== 's3cret') {
          response.writeHead(401).end('bad secret');
          return;
        }
        const event = JSON.parse(body) as { event: string; data: unknown; timestamp: string };
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ received: event.event, data: event.data, timestamp: event.timestamp }),
        );
      } else {
        response.writeHead(404).end('no such page');
      }
    });
    broker = brokerWithDefaults({
      egress: EgressPolicy.fromAllowList(['127.0.0.1/32']),
      http: { totalTimeoutMs: 1_500, maxResponseBytes: 1024 * 1024, maxRedirects: 5 },
    });
  });

  afterAll(async () => {
    await broker.close();
    await server.close();
  });

  it('round-trips method, headers, query and a JSON body', async () => {
    const value = (await broker.handle(
      'http',
      {
        method: 'put',
        url: `${server.url}/echo?x=1`,
        headers: { 'Content-Type': 'application/json', 'X-Custom': 'yes' },
        body: JSON.stringify({ hello: 'wörld' }),
      },
      context(),
    )) as { status: number; headers: Record<string, string>; body: string };
    expect(value.status).toBe(200);
    expect(value.headers['content-type']).toBe('application/json');
    expect(value.headers['x-reply']).toBe('one, two');
    const echoed = JSON.parse(value.body) as {
      method: string;
      headers: Record<string, string>;
      body: string;
      query: string;
    };
    expect(echoed.method).toBe('PUT');
    expect(echoed.query).toBe('?x=1');
    expect(echoed.headers['x-custom']).toBe('yes');
    expect(JSON.parse(echoed.body)).toEqual({ hello: 'wörld' });
  });

  it.each(['GET', 'POST', 'PATCH', 'DELETE'])('sends %s', async (method) => {
    const value = (await broker.handle(
      'http',
      { method, url: `${server.url}/echo` },
      context(),
    )) as { body: string };
    expect((JSON.parse(value.body) as { method: string }).method).toBe(method);
  });

  it.each([404, 418, 500, 503])('returns the error status %i instead of throwing', async (code) => {
    const value = await broker.handle(
      'http',
      { url: `${server.url}/status?code=${code}` },
      context(),
    );
    expect(value).toMatchObject({ status: code, body: `status ${code}` });
  });

  it('posts a webhook with a secret header', async () => {
    const timestamp = new Date('2026-01-02T03:04:05Z').toISOString();
    const value = await broker.handle(
      'http',
      {
        method: 'POST',
        url: `${server.url}/webhook`,
        headers: { 'Content-Type': 'application/json', 'X-Webhook-Secret': 's3cret' },
        body: JSON.stringify({ event: 'order.created', data: { id: 7 }, timestamp }),
      },
      context(),
    );
    expect(value).toMatchObject({ status: 200 });
    expect(JSON.parse((value as { body: string }).body)).toEqual({
      received: 'order.created',
      data: { id: 7 },
      timestamp,
    });
  });

  it('gives up on a server that never answers with ERR_HTTP_TIMEOUT', async () => {
    // `/hang` never answers: only the 1,500 ms total timeout can end this call.
    const error = await failure(broker.handle('http', { url: `${server.url}/hang` }, context()));
    expect(error).toMatchObject({
      code: 'ERR_HTTP_TIMEOUT',
      message: 'HTTP request to 127.0.0.1:' + server.port + ' timed out after 1500 ms',
    });
  });

  it('refuses a response larger than the limit, declared or streamed, without buffering it', async () => {
    const limit = 1024 * 1024;
    const fits = (await broker.handle(
      'http',
      { url: `${server.url}/big?bytes=${limit}` },
      context(),
    )) as { body: string };
    expect(fits.body.length).toBe(limit);
    for (const url of [
      `${server.url}/big?bytes=${limit + 1}&length`,
      `${server.url}/big?bytes=${limit + 1}`,
      `${server.url}/endless`,
    ]) {
      const error = await failure(broker.handle('http', { url }, context()));
      expect(error).toMatchObject({
        code: 'ERR_HTTP_TOO_LARGE',
        message: `HTTP response from 127.0.0.1:${server.port} is larger than 1048576 bytes`,
      });
    }
  });

  it('follows up to maxRedirects redirects and refuses one more', async () => {
    const arrived = await broker.handle('http', { url: `${server.url}/hops/5` }, context());
    expect(arrived).toMatchObject({ status: 200, body: 'arrived' });
    const error = await failure(broker.handle('http', { url: `${server.url}/hops/6` }, context()));
    expect(error).toMatchObject({
      code: 'ERR_HTTP_TOO_MANY_REDIRECTS',
      message: `HTTP request to 127.0.0.1:${server.port} was redirected more than 5 times`,
    });
  });

  it('turns a POST into a GET without body after 303 See Other', async () => {
    const value = (await broker.handle(
      'http',
      { method: 'POST', url: `${server.url}/see-other`, body: 'x' },
      context(),
    )) as { body: string };
    expect(JSON.parse(value.body)).toMatchObject({ method: 'GET', body: '' });
  });

  it('reports a refused connection as ERR_HTTP_FAILED naming the host', async () => {
    const closed = await startLoopbackServer(() => undefined);
    await closed.close();
    const error = await failure(broker.handle('http', { url: closed.url }, context()));
    expect(error.code).toBe('ERR_HTTP_FAILED');
    expect(error.message).toContain(`HTTP request to 127.0.0.1:${closed.port} failed`);
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('rejects malformed arguments with ERR_INVALID_ARGUMENT naming the field', async () => {
    expect(await failure(broker.handle('http', { method: 'GET' }, context()))).toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
      message: expect.stringMatching(/^sdk\.http: url: /),
    });
    expect(
      await failure(broker.handle('http', { url: 'file:///etc/passwd' }, context())),
    ).toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
      message: 'url: only http and https URLs are allowed, not file:',
    });
    expect(
      await failure(
        broker.handle(
          'http',
          { url: `${server.url}/echo`, headers: { 'x-bad': 'a\r\nb' } },
          context(),
        ),
      ),
    ).toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
    });
  });

  it('stops when the invocation is cancelled', async () => {
    const controller = new AbortController();
    const target = '/hang?by=cancel';
    const call = failure(
      broker.handle(
        'http',
        { url: `${server.url}${target}` },
        context({ signal: controller.signal }),
      ),
    );
    await expect.poll(() => server.requests).toContain(target); // in flight, then cancelled
    controller.abort();
    expect((await call).code).toBe('ERR_CANCELLED');
  });
});
