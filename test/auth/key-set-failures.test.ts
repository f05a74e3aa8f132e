/**
 * Every way the Authorization Server's key set can fail is reported as
 * ERR_AUTH_SERVER_UNAVAILABLE naming the URL and why (the HTTP layer answers
 * 503, the token may be fine) — and only those: an unexpected exception
 * while verifying is rethrown as it is, so it surfaces as the bug it is.
 * Key sets are served for real on loopback; tokens are really signed.
 */
import { generateKeyPairSync } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccessTokenVerifier } from '../../control-plane/identity/index.js';
import { McphostError } from '../../control-plane/errors.js';
import {
  answerRoutes,
  closedPortUrl,
  startLoopbackServer,
  type LoopbackServer,
  type Route,
} from '../support/loopback-server.js';
import { signToken, validClaims } from './helpers/forge-token.js';

const ISSUER = 'https://as.example.com';
const RESOURCE = 'http://keys.localhost:8080/mcp';

type SigningJwk = JWK & { kid: string; alg: string };

async function signingPair(
  alg: 'RS256' | 'ES256',
  kid: string,
): Promise<{ privateJwk: SigningJwk; publicJwk: SigningJwk }> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return {
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg },
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' },
  };
}

let server: LoopbackServer;
const routes: Record<string, Route> = {};
let rsa: Awaited<ReturnType<typeof signingPair>>;
let ec: Awaited<ReturnType<typeof signingPair>>;

beforeAll(async () => {
  [rsa, ec] = await Promise.all([signingPair('RS256', 'rsa'), signingPair('ES256', 'ec')]);
  server = await startLoopbackServer(answerRoutes(routes));
});
afterAll(() => server.close());

function verifierFor(jwksUri: string, options: { fetch?: typeof fetch; timeoutMs?: number } = {}) {
  return createAccessTokenVerifier({
    issuer: ISSUER,
    jwksUri,
    audience: RESOURCE,
    allowInsecureLoopback: true,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.timeoutMs === undefined ? {} : { jwksTimeoutMs: options.timeoutMs }),
  });
}

/** Serves `route` at a fresh path and returns its URL. */
function serve(name: string, route: Route): string {
  routes[`/${name}`] = route;
  return `${server.url}/${name}`;
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the verification to fail');
    },
    (thrown: unknown) => thrown,
  );
}

async function expectUnavailable(
  jwksUri: string,
  token: string,
  reason: RegExp,
  timeoutMs?: number,
) {
  const error = await failureOf(verifierFor(jwksUri, { timeoutMs }).verify(token));
  expect(error).toBeInstanceOf(McphostError);
  expect((error as McphostError).code).toBe('ERR_AUTH_SERVER_UNAVAILABLE');
  expect((error as McphostError).message).toContain(`authorization server keys at ${jwksUri}: `);
  expect((error as McphostError).message).toMatch(reason);
}

const rsaToken = () => signToken(rsa.privateJwk, validClaims(ISSUER, RESOURCE));

describe('a key set that cannot be had', () => {
  it('is unavailable when nothing answers, naming the network error', async () => {
    await expectUnavailable(
      `${await closedPortUrl()}/jwks`,
      await rsaToken(),
      /unreachable \(ECONNREFUSED\)/,
    );
  });

  it('is unavailable when the answer is an error status', async () => {
    const url = serve('status-500', { json: { error: 'down' }, status: 500 });
    await expectUnavailable(url, await rsaToken(), /Expected 200 OK/);
  });

  it('is unavailable when the answer is not JSON', async () => {
    const url = serve('html', { text: '<html>login</html>', contentType: 'text/html' });
    await expectUnavailable(url, await rsaToken(), /JSON/);
  });

  it('is unavailable when the answer is JSON but no key set', async () => {
    const url = serve('not-a-set', { json: { hello: 'world' } });
    await expectUnavailable(url, await rsaToken(), /not a usable key set/);
  });

  it('is unavailable when the key set holds a private key', async () => {
    const url = serve('private', { json: { keys: [rsa.privateJwk] } });
    await expectUnavailable(url, await rsaToken(), /not a usable key set.*public keys/);
  });

  it('is unavailable when the key set is larger than 256 KiB', async () => {
    const padding = 'x'.repeat(300 * 1024);
    const url = serve('huge', { json: { keys: [rsa.publicJwk], padding } });
    await expectUnavailable(url, await rsaToken(), /larger than 262144 bytes/);
  });

  it('is unavailable when the key set does not answer in time', async () => {
    const url = serve('stall', { stall: true });
    await expectUnavailable(url, await rsaToken(), /no answer within 300 ms/, 300);
  });

  it('is unavailable when a key cannot be imported', async () => {
    const url = serve('bad-point', { json: { keys: [{ ...ec.publicJwk, x: 'AAAA' }] } });
    const token = await signToken(ec.privateJwk, validClaims(ISSUER, RESOURCE));
    await expectUnavailable(url, token, /a key cannot be imported/);
  });

  it('is unavailable when the signing key is RSA under 2048 bits', async () => {
    // jose will not generate such a key; node:crypto will.
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const weak = { ...publicKey.export({ format: 'jwk' }), kid: 'weak', alg: 'RS256', use: 'sig' };
    const url = serve('weak', { json: { keys: [weak] } });
    // Signed by a strong key under the weak key's kid: the key set is refused before the signature.
    const token = await signToken(
      { ...rsa.privateJwk, kid: 'weak' },
      validClaims(ISSUER, RESOURCE),
    );
    await expectUnavailable(url, token, /key "weak" is an RSA key of 1024 bits/);
  });
});

describe('what is not the key set failing', () => {
  it('verifies with a served key set (the routes above are the only difference)', async () => {
    const url = serve('good', { json: { keys: [rsa.publicJwk, ec.publicJwk] } });
    await expect(verifierFor(url).verify(await rsaToken())).resolves.toMatchObject({
      subject: 'attacker',
    });
  });

  it('rethrows an unexpected exception from the fetch as it is, not as an outage', async () => {
    const bug = new RangeError('a bug in the fetch');
    const broken = (async () => {
      throw bug;
    }) as unknown as typeof fetch;
    const error = await failureOf(
      verifierFor(`${server.url}/good`, { fetch: broken }).verify(await rsaToken()),
    );
    expect(error).toBe(bug);
  });

  it('rethrows an unexpected exception while verifying as it is', async () => {
    const bug = new Error('the clock broke');
    const verifier = createAccessTokenVerifier({
      issuer: ISSUER,
      jwksUri: serve('good-too', { json: { keys: [rsa.publicJwk] } }),
      audience: RESOURCE,
      allowInsecureLoopback: true,
      clock: () => {
        throw bug;
      },
    });
    expect(await failureOf(verifier.verify(await rsaToken()))).toBe(bug);
  });
});
