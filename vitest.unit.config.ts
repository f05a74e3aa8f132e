import { defineConfig } from 'vitest/config';

/**
 * The tests that need no Docker engine, no PostgreSQL or MariaDB server and no
 * browser (`npm run test:unit`): they pass on a machine without Docker. The
 * global setup only bundles the harness and the dashboard (test/assets-setup.ts),
 * which a control plane on the process driver reads; the runner image is never
 * built. `npm test` runs these files too, once, among the rest.
 *
 * A file named `*.unit.test.ts` is one by its name. The files listed below
 * need none of the three either (pure logic, loopback servers, SQLite, the
 * harness as a child process, or a control plane on the process driver), but
 * kept their names; a file added here must pass with the engine and the
 * databases out of reach, e.g. in a private mount and network namespace
 * (`unshare -mn`) with /var/run/docker.sock covered and DOCKER_HOST pointing
 * nowhere.
 */
const DOCKER_FREE = [
  'test/accounts/cookies.test.ts',
  'test/accounts/oidc-flow-state.test.ts',
  'test/accounts/oidc-sign-in.test.ts',
  'test/accounts/password-hash.test.ts',
  'test/accounts/sealed-cookie.test.ts',
  'test/accounts/sign-in-throttle.test.ts',
  'test/auth/access-token-verifier.test.ts',
  'test/auth/authenticate-bearer.test.ts',
  'test/auth/authorization-server-fixture.test.ts',
  'test/auth/authorization-server-metadata.test.ts',
  'test/auth/bearer-challenge.test.ts',
  'test/auth/key-rotation.test.ts',
  'test/auth/key-set-failures.test.ts',
  'test/auth/oauth-egress.test.ts',
  'test/bench/cpu-accounting.test.ts',
  'test/broker/egress-policy.test.ts',
  'test/broker/http-egress.test.ts',
  'test/broker/http-encodings.test.ts',
  'test/broker/http.test.ts',
  'test/broker/ip-address.test.ts',
  'test/broker/sql-statements.test.ts',
  'test/broker/mysql-placeholders.test.ts',
  'test/broker/mysql-sql-mode.test.ts',
  'test/broker/pool-registry.test.ts',
  'test/control-plane/identity/caller-identity.test.ts',
  'test/control-plane/app/ensure-dependencies.test.ts',
  'test/control-plane/app/error-registry.test.ts',
  'test/control-plane/http/held-answer.test.ts',
  'test/control-plane/http/http-listeners.test.ts',
  'test/control-plane/mcp/rate-limiter.test.ts',
  'test/control-plane/app/readme-config.test.ts',
  'test/control-plane/app/readme-metrics.test.ts',
  'test/control-plane/http/server-gate.test.ts',
  'test/control-plane/mcp/session-registry.test.ts',
  'test/control-plane/admin/admin-test-run.test.ts',
  'test/control-plane/broker/egress-settings.test.ts',
  'test/control-plane/messages/first-hour-messages-oauth.test.ts',
  'test/control-plane/messages/first-hour-messages-port.test.ts',
  'test/dashboard/serve-dashboard.test.ts',
  'test/runner/tool-code.test.ts',
  'test/runner/harness-behaviour.test.ts',
  'test/runner/harness-client-features.test.ts',
  'test/runner/harness-escape.test.ts',
  'test/runner/harness-leftovers.test.ts',
  'test/runner/harness-protocol.test.ts',
  'test/sandbox-drivers/process-sandbox.test.ts',
  'test/sandbox-drivers/stream-demuxer.test.ts',
  'test/self-hosting/dockerfiles.test.ts',
  'test/store/entries-sqlite.test.ts',
  'test/store/invocation-log.test.ts',
  'test/store/master-key.test.ts',
  'test/store/newer-schema.test.ts',
  'test/store/secret-cipher.test.ts',
  'test/store/sqlite-store.test.ts',
];

export default defineConfig({
  test: {
    include: ['test/**/*.unit.test.ts', ...DOCKER_FREE],
    globalSetup: ['test/assets-setup.ts'],
    exclude: ['node_modules/**'],
    pool: 'forks',
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
