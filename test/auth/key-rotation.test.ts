import { decodeProtectedHeader } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAccessTokenVerifier } from '../../control-plane/identity/index.js';
import {
  startAuthorizationServer,
  type TestAuthorizationServer,
} from '../fixtures/authorization-server.js';

const RESOURCE = 'http://rotation.localhost:8080/mcp';

describe('signing key rotation at the Authorization Server', () => {
  let as: TestAuthorizationServer;
  beforeEach(async () => {
    as = await startAuthorizationServer({ algorithm: 'ES256' });
  });
  afterEach(() => as.close());

  const verifierWithCooldown = (jwksCooldownMs: number) =>
    createAccessTokenVerifier({
      issuer: as.issuer,
      jwksUri: as.jwksUri,
      audience: RESOURCE,
      allowInsecureLoopback: true,
      jwksCooldownMs,
    });

  it('accepts tokens signed with the new key after refetching the JWKS on the unknown kid', async () => {
    const verifier = verifierWithCooldown(0);
    const before = await as.issueTokenFor(RESOURCE);
    await verifier.verify(before);
    await as.rotateKeys();
    const after = await as.issueTokenFor(RESOURCE);
    expect(decodeProtectedHeader(after).kid).not.toBe(decodeProtectedHeader(before).kid);
    await expect(verifier.verify(after)).resolves.toMatchObject({ scopes: ['mcp:tools'] });
    // The old key is gone from the JWKS, so its tokens no longer verify.
    await expect(verifier.verify(before)).rejects.toMatchObject({
      code: 'ERR_INVALID_TOKEN',
      message: 'token signing key is unknown',
    });
  });

  it('rate-limits refetches: within the cooldown an unknown kid is refused without a new fetch', async () => {
    const verifier = verifierWithCooldown(60_000);
    await verifier.verify(await as.issueTokenFor(RESOURCE));
    await as.rotateKeys();
    const after = await as.issueTokenFor(RESOURCE);
    await expect(verifier.verify(after)).rejects.toMatchObject({
      code: 'ERR_INVALID_TOKEN',
      message: 'token signing key is unknown',
    });
  });
});
