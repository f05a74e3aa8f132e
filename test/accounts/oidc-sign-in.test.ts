import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CookieSealer,
  createOidcSignIn,
  OIDC_FLOW_TTL_SECONDS,
  parseOidcFlowState,
  type OidcSignInOptions,
} from '../../control-plane/identity/index.js';
import {
  startAuthorizationServer,
  type TestAuthorizationServer,
} from '../fixtures/authorization-server.js';
import { closedPortUrl, freePort } from '../support/loopback-server.js';

// Never contacted: the form walker stops at the redirect away from the provider.
const REDIRECT_URI = 'http://127.0.0.1:9/auth/oidc/callback';
const CLIENT_SECRET = randomBytes(24).toString('base64url');
const ACCOUNTS = {
  alice: { email: 'alice@example.com', name: 'Alice Example' },
  bob: { email: 'bob@example.com', email_verified: false },
};

/** Records the URLs the sign-in fetched, then fetches for real. */
function recordingFetch(urls: string[]): typeof fetch {
  return (input, init) => {
    urls.push(String(input));
    return fetch(input, init);
  };
}

describe('OpenID Connect sign-in against a real provider', () => {
  let as: TestAuthorizationServer;
  let options: OidcSignInOptions;

  beforeAll(async () => {
    as = await startAuthorizationServer({
      accounts: ACCOUNTS,
      clients: [
        { client_id: 'dashboard', client_secret: CLIENT_SECRET, redirect_uris: [REDIRECT_URI] },
        { client_id: 'dashboard-public', redirect_uris: [REDIRECT_URI] },
      ],
    });
    options = {
      issuer: as.issuer,
      clientId: 'dashboard',
      clientSecret: CLIENT_SECRET,
      redirectUri: REDIRECT_URI,
      allowInsecureLoopback: true,
    };
  });
  afterAll(() => as.close());

  /** start → the provider's login and consent forms → the callback URL. */
  async function authorize(
    signIn = createOidcSignIn(options),
    walk: { login?: string; deny?: boolean } = { login: 'alice' },
  ) {
    const started = await signIn.start('/#/servers');
    const callback = await as.completeAuthorization(new URL(started.redirectUrl), walk);
    return { signIn, flow: started.flow, callback, redirectUrl: new URL(started.redirectUrl) };
  }

  it('sends a code flow request with PKCE S256, state and nonce', async () => {
    const { redirectUrl, flow } = await authorize();
    expect(`${redirectUrl.origin}${redirectUrl.pathname}`).toBe(`${as.issuer}/auth`);
    expect(Object.fromEntries(redirectUrl.searchParams)).toMatchObject({
      client_id: 'dashboard',
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      scope: 'openid email profile',
      state: flow.state,
      nonce: flow.nonce,
      code_challenge_method: 'S256',
    });
    expect(redirectUrl.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(redirectUrl.href).not.toContain(flow.codeVerifier);
    expect(flow).toMatchObject({ returnTo: '/#/servers', redirectUri: REDIRECT_URI });
  });

  it('signs in a confidential client: subject, verified e-mail and name (from userinfo)', async () => {
    const fetched: string[] = [];
    const signIn = createOidcSignIn({ ...options, fetch: recordingFetch(fetched) });
    const { flow, callback } = await authorize(signIn);
    expect(await signIn.finish(callback, flow)).toEqual({
      issuer: as.issuer,
      subject: 'alice',
      email: 'alice@example.com',
      emailVerified: true,
      name: 'Alice Example',
    });
    // oidc-provider keeps scope claims out of a code flow's ID token: they came from userinfo.
    expect(fetched).toContain(`${as.issuer}/me`);
  });

  it('signs in a public client (no secret, PKCE only)', async () => {
    const signIn = createOidcSignIn({
      ...options,
      clientId: 'dashboard-public',
      clientSecret: undefined,
    });
    const { flow, callback } = await authorize(signIn);
    expect(await signIn.finish(callback, flow)).toMatchObject({ subject: 'alice' });
  });

  it('reports an unverified e-mail as unverified and an account without claims as such', async () => {
    const signIn = createOidcSignIn(options);
    const bob = await authorize(signIn, { login: 'bob' });
    expect(await signIn.finish(bob.callback, bob.flow)).toEqual({
      issuer: as.issuer,
      subject: 'bob',
      email: 'bob@example.com',
      emailVerified: false,
    });
    const carol = await authorize(signIn, { login: 'carol' });
    expect(await signIn.finish(carol.callback, carol.flow)).toEqual({
      issuer: as.issuer,
      subject: 'carol',
      emailVerified: false,
    });
  });

  it('completes through a sealed flow cookie opened by another instance (another replica)', async () => {
    const key = randomBytes(32);
    const { flow, callback } = await authorize();
    const cookie = new CookieSealer(key, 'oidc-flow').seal(flow, OIDC_FLOW_TTL_SECONDS);
    const opened = parseOidcFlowState(new CookieSealer(key, 'oidc-flow').open(cookie));
    expect(opened).toEqual(flow);
    await expect(createOidcSignIn(options).finish(callback, opened!)).resolves.toMatchObject({
      subject: 'alice',
    });
  });

  it('never returns to another origin', async () => {
    const { flow } = await createOidcSignIn(options).start('https://evil.example/steal');
    expect(flow.returnTo).toBe('/');
  });

  it('refuses a callback whose state is not this browser’s flow', async () => {
    const first = await authorize();
    const second = await authorize(first.signIn);
    const failure = first.signIn.finish(first.callback, second.flow);
    await expect(failure).rejects.toMatchObject({
      code: 'ERR_UNAUTHORIZED',
      message: expect.stringMatching(/state mismatch.*start again/),
    });
    // The legitimate flow still completes: the refused attempt used nothing up.
    await expect(first.signIn.finish(first.callback, first.flow)).resolves.toMatchObject({
      subject: 'alice',
    });
  });

  it('refuses a tampered code without repeating it', async () => {
    const { signIn, flow, callback } = await authorize();
    const code = callback.searchParams.get('code') ?? '';
    const tampered = new URL(callback);
    tampered.searchParams.set('code', `${code.slice(0, -2)}xx`);
    const error = await signIn.finish(tampered, flow).catch((failure: unknown) => failure);
    expect(error).toMatchObject({
      code: 'ERR_UNAUTHORIZED',
      message: expect.stringMatching(/did not accept the sign-in \(invalid_grant\)/),
    });
    const message = (error as Error).message;
    for (const secret of [code, flow.codeVerifier, flow.nonce, flow.state]) {
      expect(message).not.toContain(secret);
    }
  });

  it('refuses a code used twice and a code with another verifier', async () => {
    const { signIn, flow, callback } = await authorize();
    await signIn.finish(callback, flow);
    await expect(signIn.finish(callback, flow)).rejects.toMatchObject({
      code: 'ERR_UNAUTHORIZED',
    });
    const other = await authorize(signIn);
    const wrongVerifier = { ...other.flow, codeVerifier: randomBytes(32).toString('base64url') };
    await expect(signIn.finish(other.callback, wrongVerifier)).rejects.toMatchObject({
      code: 'ERR_UNAUTHORIZED',
      message: expect.stringContaining('invalid_grant'),
    });
  });

  it('refuses an ID token with another nonce', async () => {
    const { signIn, flow, callback } = await authorize();
    await expect(
      signIn.finish(callback, { ...flow, nonce: randomBytes(32).toString('base64url') }),
    ).rejects.toMatchObject({
      code: 'ERR_UNAUTHORIZED',
      message: expect.stringMatching(/failed verification.*nonce/),
    });
  });

  it('refuses an ID token whose signature is not the provider’s', async () => {
    const forger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    // A man in the middle re-signs the ID token with its own key under the provider's kid.
    const forging: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!String(input).endsWith('/token') || !response.ok) return response;
      const body = (await response.json()) as { id_token: string };
      const { kid } = decodeProtectedHeader(body.id_token);
      body.id_token = await new SignJWT(decodeJwt(body.id_token))
        .setProtectedHeader({ alg: 'RS256', kid })
        .sign(forger);
      return Response.json(body, { headers: { 'cache-control': 'no-store' } });
    };
    const signIn = createOidcSignIn({ ...options, fetch: forging });
    const { flow, callback } = await authorize(signIn);
    await expect(signIn.finish(callback, flow)).rejects.toMatchObject({
      code: 'ERR_UNAUTHORIZED',
      message: expect.stringMatching(/failed verification.*signature/),
    });
  });

  it('reports a refusal at the provider (access_denied) in plain words', async () => {
    const { signIn, flow, callback } = await authorize(undefined, { deny: true });
    expect(callback.searchParams.get('error')).toBe('access_denied');
    await expect(signIn.finish(callback, flow)).rejects.toMatchObject({
      code: 'ERR_UNAUTHORIZED',
      message:
        'the sign-in was cancelled or refused at the identity provider (access_denied); start again to retry',
    });
  });

  it('says which setting to check when the client secret is wrong', async () => {
    const signIn = createOidcSignIn({ ...options, clientSecret: 'not-the-secret' });
    const { flow, callback } = await authorize(signIn);
    await expect(signIn.finish(callback, flow)).rejects.toMatchObject({
      code: 'ERR_UNAUTHORIZED',
      message: expect.stringMatching(/invalid_client.*ADMIN_OIDC_CLIENT_SECRET/),
    });
  });

  it('refuses a flow that is missing, malformed or for another redirect URI', async () => {
    const { signIn, flow, callback } = await authorize();
    for (const bad of [undefined, {}, { ...flow, redirectUri: 'http://127.0.0.1:9/other' }]) {
      await expect(signIn.finish(callback, bad as unknown as typeof flow)).rejects.toMatchObject({
        code: 'ERR_UNAUTHORIZED',
        message: /start again/,
      });
    }
  });

  it('takes e-mail and name from the ID token when the provider puts them there', async () => {
    const claimsInToken = await startAuthorizationServer({
      accounts: ACCOUNTS,
      idTokenClaims: true,
    });
    try {
      await claimsInToken.addClient({ client_id: 'late', redirect_uris: [REDIRECT_URI] });
      const fetched: string[] = [];
      const signIn = createOidcSignIn({
        issuer: claimsInToken.issuer,
        clientId: 'late',
        redirectUri: REDIRECT_URI,
        allowInsecureLoopback: true,
        fetch: recordingFetch(fetched),
      });
      const started = await signIn.start('/');
      const callback = await claimsInToken.completeAuthorization(new URL(started.redirectUrl), {
        login: 'alice',
      });
      expect(await signIn.finish(callback, started.flow)).toMatchObject({
        email: 'alice@example.com',
        emailVerified: true,
        name: 'Alice Example',
      });
      expect(fetched).not.toContain(`${claimsInToken.issuer}/me`);
    } finally {
      await claimsInToken.close();
    }
  });
});

describe('OpenID Connect sign-in when the provider is unreachable', () => {
  it('answers ERR_AUTH_SERVER_UNAVAILABLE and retries discovery once the provider is up', async () => {
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    const signIn = createOidcSignIn({
      issuer,
      clientId: 'dashboard',
      redirectUri: REDIRECT_URI,
      allowInsecureLoopback: true,
    });
    await expect(signIn.start('/')).rejects.toMatchObject({
      code: 'ERR_AUTH_SERVER_UNAVAILABLE',
      message: expect.stringMatching(/cannot be used now.*ECONNREFUSED.*try again later/),
    });
    const as = await startAuthorizationServer({
      port,
      clients: [{ client_id: 'dashboard', redirect_uris: [REDIRECT_URI] }],
    });
    try {
      const { redirectUrl } = await signIn.start('/');
      expect(redirectUrl.startsWith(`${issuer}/auth?`)).toBe(true);
    } finally {
      await as.close();
    }
  });

  it('answers ERR_AUTH_SERVER_UNAVAILABLE when the provider goes away before the code exchange', async () => {
    const as = await startAuthorizationServer({
      clients: [{ client_id: 'dashboard', redirect_uris: [REDIRECT_URI] }],
    });
    const signIn = createOidcSignIn({
      issuer: as.issuer,
      clientId: 'dashboard',
      redirectUri: REDIRECT_URI,
      allowInsecureLoopback: true,
    });
    const { flow, redirectUrl } = await signIn.start('/');
    const callback = await as.completeAuthorization(new URL(redirectUrl));
    await as.close();
    await expect(signIn.finish(callback, flow)).rejects.toMatchObject({
      code: 'ERR_AUTH_SERVER_UNAVAILABLE',
    });
  });

  it('answers ERR_AUTH_SERVER_UNAVAILABLE for an issuer where nothing listens', async () => {
    const signIn = createOidcSignIn({
      issuer: await closedPortUrl(),
      clientId: 'dashboard',
      redirectUri: REDIRECT_URI,
      allowInsecureLoopback: true,
    });
    await expect(signIn.start('/')).rejects.toMatchObject({ code: 'ERR_AUTH_SERVER_UNAVAILABLE' });
  });
});

describe('createOidcSignIn options', () => {
  const valid: OidcSignInOptions = {
    issuer: 'https://login.example.com',
    clientId: 'dashboard',
    redirectUri: 'https://admin.example.com/auth/oidc/callback',
  };

  it('accepts https issuers and fetches nothing at creation', () => {
    expect(() => createOidcSignIn(valid)).not.toThrow();
  });

  it('throws TypeError for insecure or malformed settings', () => {
    const wrong: Array<Partial<OidcSignInOptions>> = [
      { issuer: 'http://login.example.com' },
      { issuer: 'http://127.0.0.1:8080' }, // loopback, but insecure loopback not allowed
      { issuer: 'http://login.example.com', allowInsecureLoopback: true },
      { issuer: 'not a url' },
      { clientId: '' },
      { clientSecret: '' },
      { redirectUri: 'https://admin.example.com/cb?x=1' },
      { redirectUri: '/auth/oidc/callback' },
      { timeoutSeconds: 0 },
    ];
    for (const override of wrong) {
      expect(() => createOidcSignIn({ ...valid, ...override }), JSON.stringify(override)).toThrow(
        TypeError,
      );
    }
  });
});
