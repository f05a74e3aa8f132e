import { createPublicKey } from 'node:crypto';
import {
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  exportJWK,
  generateKeyPair,
  jwtVerify,
} from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAccessTokenVerifier,
  type AccessTokenVerifier,
} from '../../control-plane/identity/index.js';
import { McphostError } from '../../control-plane/errors.js';
import {
  startAuthorizationServer,
  type TestAuthorizationServer,
} from '../fixtures/authorization-server.js';
import { hmacToken, signToken, unsignedToken, validClaims } from './helpers/forge-token.js';
import {
  answerRoutes,
  closedPortUrl,
  startLoopbackServer,
  type LoopbackServer,
} from '../support/loopback-server.js';

const RESOURCE = 'http://demo.localhost:8080/mcp';

async function rejection(verifier: AccessTokenVerifier, token: string): Promise<McphostError> {
  const error = await verifier.verify(token).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(McphostError);
  return error as McphostError;
}

async function expectInvalid(
  verifier: AccessTokenVerifier,
  token: string,
  message: string,
): Promise<void> {
  const error = await rejection(verifier, token);
  expect({ code: error.code, message: error.message }).toEqual({
    code: 'ERR_INVALID_TOKEN',
    message,
  });
}

describe('access token verification with a real Authorization Server', () => {
  let rsa: TestAuthorizationServer;
  let ec: TestAuthorizationServer;
  let attacker: LoopbackServer;
  let attackerKey: Awaited<ReturnType<typeof exportJWK>> & { kid: string; alg: string };
  let verifier: AccessTokenVerifier;

  beforeAll(async () => {
    [rsa, ec] = await Promise.all([
      startAuthorizationServer({ algorithm: 'RS256' }),
      startAuthorizationServer({ algorithm: 'ES256' }),
    ]);
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    attackerKey = { ...(await exportJWK(privateKey)), kid: rsa.privateJwk.kid, alg: 'RS256' };
    const attackerPublic = {
      ...(await exportJWK(publicKey)),
      kid: rsa.privateJwk.kid,
      alg: 'RS256',
      use: 'sig',
    };
    attacker = await startLoopbackServer(
      answerRoutes({
        '/jwks': { json: { keys: [attackerPublic] } },
        '/cert.pem': { text: 'not a cert', contentType: 'application/pem-certificate-chain' },
      }),
    );
    verifier = createAccessTokenVerifier({
      issuer: rsa.issuer,
      jwksUri: rsa.jwksUri,
      audience: RESOURCE,
      allowInsecureLoopback: true,
    });
  });
  afterAll(async () => {
    await Promise.all([rsa.close(), ec.close(), attacker.close()]);
  });

  it('accepts an RS256 token from client_credentials with a resource indicator', async () => {
    const token = await rsa.issueTokenFor(RESOURCE);
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'RS256', typ: 'at+jwt' });
    const caller = await verifier.verify(token);
    expect(caller).toEqual({
      subject: 'fixture-machine-client',
      clientId: 'fixture-machine-client',
      scopes: ['mcp:tools'],
      // Every claim of the verified token (what code sees of them is the server's choice).
      claims: decodeJwt(token),
      expiresAt: new Date((decodeJwt(token).exp ?? 0) * 1000),
    });
  });

  it('accepts an ES256 token obtained through the authorization-code flow with PKCE', async () => {
    const token = await ec.authorizeWithCode(RESOURCE);
    expect(decodeProtectedHeader(token).alg).toBe('ES256');
    const ecVerifier = createAccessTokenVerifier({
      issuer: ec.issuer,
      jwksUri: ec.jwksUri,
      audience: ['http://other.localhost:8080/mcp', RESOURCE],
      allowInsecureLoopback: true,
    });
    const caller = await ecVerifier.verify(token);
    expect(caller.subject).toBe('fixture-user');
    expect(caller.clientId).toMatch(/.+/);
    expect(caller.scopes).toEqual(['mcp:tools']);
  });

  it('refuses an expired token, honouring the clock tolerance', async () => {
    const token = await rsa.issueTokenFor(RESOURCE);
    const exp = decodeJwt(token).exp ?? 0;
    const at = (seconds: number) =>
      createAccessTokenVerifier({
        issuer: rsa.issuer,
        jwksUri: rsa.jwksUri,
        audience: RESOURCE,
        allowInsecureLoopback: true,
        clock: () => new Date(seconds * 1000),
      });
    await expect(at(exp + 20).verify(token)).resolves.toMatchObject({ scopes: ['mcp:tools'] });
    await expectInvalid(at(exp + 31), token, 'token has expired');
  });

  it('refuses a token that is not yet valid', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await signToken(rsa.privateJwk, {
      ...validClaims(rsa.issuer, RESOURCE),
      nbf: now + 300,
    });
    await expectInvalid(verifier, token, 'token is not yet valid');
  });

  it('refuses a token from another issuer, even signed with the right key', async () => {
    const token = await signToken(
      rsa.privateJwk,
      validClaims('http://127.0.0.1:1/other', RESOURCE),
    );
    await expectInvalid(verifier, token, 'token issuer is not the configured authorization server');
    await expectInvalid(verifier, await ec.issueTokenFor(RESOURCE), 'token signing key is unknown');
  });

  it('refuses a real token issued for another resource', async () => {
    const token = await rsa.issueTokenFor('http://other.localhost:8080/mcp');
    await expectInvalid(verifier, token, 'token audience does not include this resource');
  });

  it('refuses a tampered signature and a signature by another key under the real kid', async () => {
    const token = await rsa.issueTokenFor(RESOURCE);
    const [header, payload] = token.split('.');
    const forgedPayload = Buffer.from(
      JSON.stringify({ ...decodeJwt(token), scope: 'mcp:tools mcp:admin' }),
    ).toString('base64url');
    await expectInvalid(
      verifier,
      `${header}.${forgedPayload}.${token.split('.')[2]}`,
      'token signature is invalid',
    );
    await expectInvalid(
      verifier,
      `${header}.${payload}.${'A'.repeat(342)}`,
      'token signature is invalid',
    );
    const byAttacker = await signToken(attackerKey, validClaims(rsa.issuer, RESOURCE));
    await expectInvalid(verifier, byAttacker, 'token signature is invalid');
  });

  it('refuses alg none', async () => {
    const token = unsignedToken(validClaims(rsa.issuer, RESOURCE), { kid: rsa.privateJwk.kid });
    await expectInvalid(verifier, token, 'token algorithm is not allowed');
  });

  it('refuses HS256 signed with the public key bytes (algorithm confusion)', async () => {
    const publicPem = createPublicKey({ key: rsa.privateJwk, format: 'jwk' }).export({
      type: 'spki',
      format: 'pem',
    });
    const claims = validClaims(rsa.issuer, RESOURCE);
    await expectInvalid(
      verifier,
      hmacToken(claims, publicPem, { kid: rsa.privateJwk.kid }),
      'token algorithm is not allowed',
    );
    const jwksBody = await (await fetch(rsa.jwksUri)).text();
    await expectInvalid(verifier, hmacToken(claims, jwksBody), 'token algorithm is not allowed');
  });

  it('refuses an unknown kid', async () => {
    const token = await signToken(
      { ...attackerKey, kid: 'no-such-key' },
      validClaims(rsa.issuer, RESOURCE),
    );
    await expectInvalid(verifier, token, 'token signing key is unknown');
  });

  it('never follows jku, x5u or jwk headers', async () => {
    const claims = validClaims(rsa.issuer, RESOURCE);
    const withJku = await signToken(attackerKey, claims, { jku: `${attacker.url}/jwks` });
    await expectInvalid(
      verifier,
      withJku,
      'token header names a foreign key set (jku), which is not accepted',
    );
    const withX5u = await signToken(attackerKey, claims, {
      x5u: `${attacker.url}/cert.pem`,
    } as never);
    await expectInvalid(
      verifier,
      withX5u,
      'token header carries a key (jwk/x5u), which is not accepted',
    );
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...attackerPublic } = attackerKey;
    const withJwk = await signToken(attackerKey, claims, { jwk: attackerPublic });
    await expectInvalid(
      verifier,
      withJwk,
      'token header carries a key (jwk/x5u), which is not accepted',
    );

    // jose on its own ignores jku too: the remote key set never consults the header's URL.
    const joseOnly = createRemoteJWKSet(new URL(rsa.jwksUri));
    await expect(jwtVerify(withJku, joseOnly)).rejects.toBeInstanceOf(
      errors.JWSSignatureVerificationFailed,
    );
    expect(attacker.requests).toEqual([]);
  });

  it('accepts a jku header that names the configured jwks_uri', async () => {
    const token = await signToken(rsa.privateJwk, validClaims(rsa.issuer, RESOURCE), {
      jku: rsa.jwksUri,
    });
    await expect(verifier.verify(token)).resolves.toMatchObject({ subject: 'attacker' });
  });

  it('refuses a token whose typ is not an access token', async () => {
    const token = await signToken(rsa.privateJwk, validClaims(rsa.issuer, RESOURCE), {
      typ: 'dpop+jwt',
    });
    await expectInvalid(verifier, token, 'token type is not an access token');
    const plainJwt = await signToken(rsa.privateJwk, validClaims(rsa.issuer, RESOURCE), {
      typ: 'JWT',
    });
    await expect(verifier.verify(plainJwt)).resolves.toMatchObject({ clientId: 'attacker-client' });
  });

  it.each([
    ['garbage', 'not-a-jwt', 'token is not a well-formed JWT'],
    ['three garbage segments', 'a.b.c', 'token is not a well-formed JWT'],
    [
      'a bare header with empty payload and signature',
      `${Buffer.from('{"alg":"RS256"}').toString('base64url')}..`,
      'token signature is invalid',
    ],
  ])('refuses %s', async (_label, token, message) => {
    await expectInvalid(verifier, token, message);
  });

  it('refuses a token without exp', async () => {
    const { exp: _exp, ...claims } = validClaims(rsa.issuer, RESOURCE);
    await expectInvalid(
      verifier,
      await signToken(rsa.privateJwk, claims),
      'token has no valid expiry',
    );
  });

  it('reads scopes from scp arrays and the client from azp', async () => {
    const { scope: _scope, client_id: _clientId, ...claims } = validClaims(rsa.issuer, RESOURCE);
    const token = await signToken(rsa.privateJwk, {
      ...claims,
      scp: ['a', 'b'],
      azp: 'azp-client',
    });
    await expect(verifier.verify(token)).resolves.toMatchObject({
      scopes: ['a', 'b'],
      clientId: 'azp-client',
    });
  });

  it('refuses a token lacking a required scope with ERR_INSUFFICIENT_SCOPE', async () => {
    const scoped = createAccessTokenVerifier({
      issuer: rsa.issuer,
      jwksUri: rsa.jwksUri,
      audience: RESOURCE,
      requiredScopes: ['mcp:tools', 'mcp:admin'],
      allowInsecureLoopback: true,
    });
    const error = await rejection(scoped, await rsa.issueTokenFor(RESOURCE));
    expect({ code: error.code, message: error.message }).toEqual({
      code: 'ERR_INSUFFICIENT_SCOPE',
      message: 'token lacks required scope: mcp:admin',
    });
  });

  it('reports an unreachable JWKS as ERR_AUTH_SERVER_UNAVAILABLE, not as a bad token', async () => {
    const jwksUri = `${await closedPortUrl()}/jwks`;
    const unreachable = createAccessTokenVerifier({
      issuer: rsa.issuer,
      jwksUri,
      audience: RESOURCE,
      allowInsecureLoopback: true,
    });
    const error = await rejection(unreachable, await rsa.issueTokenFor(RESOURCE));
    expect({ code: error.code, message: error.message }).toEqual({
      code: 'ERR_AUTH_SERVER_UNAVAILABLE',
      message: `authorization server keys at ${jwksUri}: unreachable (ECONNREFUSED)`,
    });
  });
});

describe('createAccessTokenVerifier options', () => {
  const base = {
    issuer: 'https://as.example.com',
    jwksUri: 'https://as.example.com/jwks',
    audience: RESOURCE,
    allowInsecureLoopback: false,
  };

  it('is a TypeError to allow only symmetric or no algorithms', () => {
    expect(() =>
      createAccessTokenVerifier({ ...base, allowedAlgorithms: ['HS256', 'none'] }),
    ).toThrow(TypeError);
  });

  it('keeps only the asymmetric part of allowedAlgorithms', async () => {
    const esOnly = createAccessTokenVerifier({ ...base, allowedAlgorithms: ['HS256', 'ES256'] });
    const rsToken = unsignedToken(validClaims(base.issuer, RESOURCE), { alg: 'RS256' });
    await expectInvalid(esOnly, rsToken, 'token algorithm is not allowed');
  });

  it('is a TypeError to give a plain-HTTP jwks_uri', () => {
    expect(() =>
      createAccessTokenVerifier({ ...base, jwksUri: 'http://as.example.com/jwks' }),
    ).toThrow('createAccessTokenVerifier: jwksUri http://as.example.com/jwks does not use HTTPS');
    expect(() =>
      createAccessTokenVerifier({ ...base, jwksUri: 'http://127.0.0.1:9/jwks' }),
    ).toThrow(TypeError);
  });

  it('is a TypeError to give no audience', () => {
    expect(() => createAccessTokenVerifier({ ...base, audience: [] })).toThrow(TypeError);
  });
});
