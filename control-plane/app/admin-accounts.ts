/**
 * The admin side's people and their trail, assembled for the composition
 * root: who is calling (admin token, personal tokens, sessions), how they
 * sign in (passwords throttled per address; OpenID Connect when configured),
 * the audit trail, and the hourly upkeep that ends stale sessions and drops
 * audit entries past their retention (on every replica: both deletes are
 * idempotent, so replicas doing the same work at once is harmless).
 */
import {
  AddressThrottle,
  AdminAuthenticator,
  ConcurrencyLimit,
  CookieSealer,
  createOidcSignIn,
  CredentialUseRecorder,
  type AdminToken,
} from '../identity/index.js';
import { AuditTrail, type SignInServices } from '../admin/index.js';
import type { Config } from '../config.js';
import { McphostError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/index.js';

/** How often sessions and audit entries are pruned, in ms. */
const UPKEEP_INTERVAL_MS = 60 * 60_000;
const DAY_MS = 86_400_000;
/** scrypt checks running at once (~32 MiB each) and waiting; more are refused (503). */
const PASSWORD_CHECKS_AT_ONCE = 4;
const PASSWORD_CHECKS_WAITING = 64;

export interface AdminAccounts {
  authenticator: AdminAuthenticator;
  audit: AuditTrail;
  signIn: SignInServices;
  /** Stops the upkeep timer and writes the token uses and refusal counts still noted. */
  stop(): Promise<void>;
}

/** Builds the admin side's accounts; ERR_CONFIG when single sign-on is half configured. */
export function createAdminAccounts(
  config: Config,
  store: Store,
  token: AdminToken,
  masterKey: Buffer,
  log: Logger,
): AdminAccounts {
  const sessionIdleMs = config.adminSessionIdleMinutes * 60_000;
  const tokenUses = new CredentialUseRecorder({
    touch: (ids) => store.touchCredentials(ids),
    onError: (error) =>
      log.warn({ err: error, component: 'admin-accounts' }, 'recording token use failed'),
  });
  const authenticator = new AdminAuthenticator({
    store,
    token,
    sessionIdleMs,
    cookieSecure: config.adminCookieSecure,
    tokenUses,
  });
  const audit = new AuditTrail(store, log);
  const signIn: SignInServices = {
    throttle: new AddressThrottle({ perMinute: config.signInAttemptsPerMinute }),
    bearers: new AddressThrottle({ perMinute: config.signInAttemptsPerMinute }),
    passwordWork: new ConcurrencyLimit({
      maxRunning: PASSWORD_CHECKS_AT_ONCE,
      maxWaiting: PASSWORD_CHECKS_WAITING,
      refusal: () =>
        new McphostError('ERR_NO_CAPACITY', 'too many sign-ins at once: try again shortly'),
    }),
    ...(config.adminOidcIssuer === undefined ? {} : { oidc: oidcServices(config, masterKey) }),
  };

  const upkeep = async () => {
    const now = Date.now();
    await store.pruneAdminSessions(new Date(now - sessionIdleMs).toISOString());
    if (config.auditRetentionDays > 0) {
      await store.pruneAudit(new Date(now - config.auditRetentionDays * DAY_MS).toISOString());
    }
  };
  const run = () =>
    void upkeep().catch((error: unknown) =>
      log.warn({ err: error, component: 'admin-accounts' }, 'pruning sessions or audit failed'),
    );
  run();
  const timer = setInterval(run, UPKEEP_INTERVAL_MS);
  timer.unref();
  return {
    authenticator,
    audit,
    signIn,
    stop: async () => {
      clearInterval(timer);
      await tokenUses.close();
      await audit.close();
    },
  };
}

function oidcServices(config: Config, masterKey: Buffer): NonNullable<SignInServices['oidc']> {
  const issuer = config.adminOidcIssuer!;
  const missing = [
    config.adminOidcClientId === undefined ? 'ADMIN_OIDC_CLIENT_ID' : undefined,
    config.adminOidcRedirectUrl === undefined ? 'ADMIN_OIDC_REDIRECT_URL' : undefined,
  ].filter((name) => name !== undefined);
  if (missing.length > 0) {
    throw new McphostError(
      'ERR_CONFIG',
      `invalid configuration: ADMIN_OIDC_ISSUER is set, so ${missing.join(' and ')} must be too`,
    );
  }
  try {
    return {
      issuer,
      // The master key is shared by replicas; the sealer derives a key of its own from it.
      sealer: new CookieSealer(masterKey, 'admin-oidc-flow'),
      flow: createOidcSignIn({
        issuer,
        clientId: config.adminOidcClientId!,
        ...(config.adminOidcClientSecret === undefined
          ? {}
          : { clientSecret: config.adminOidcClientSecret }),
        redirectUri: config.adminOidcRedirectUrl!,
        allowInsecureLoopback: config.oauthAllowInsecureLoopback,
      }),
    };
  } catch (error) {
    throw new McphostError('ERR_CONFIG', `invalid configuration: ${(error as Error).message}`);
  }
}
