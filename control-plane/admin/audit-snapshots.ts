/**
 * The state a write route changes, read before it runs, for the audit
 * entry's `summary.before`. Each reads what the route's GET answers (the
 * dispatcher strips secrets from it); undefined when there was nothing yet.
 */
import { poolUnitOf } from '../sandbox/index.js';
import type { AccountRecord, EntryKind } from '../store/index.js';
import type { AdminContext } from './admin-context.js';
import { serverView } from './server-view.js';

type Snapshot = (params: Record<string, string>) => Promise<unknown>;

/** The snapshots of the admin routes' records. */
export function snapshots(context: Pick<AdminContext, 'store' | 'pools' | 'config'>): {
  server: Snapshot;
  tool: Snapshot;
  entry: (kind: EntryKind) => Snapshot;
  secret: Snapshot;
  pool: Snapshot;
  account: Snapshot;
} {
  const { store } = context;
  return {
    // What GET /api/servers/{sub} answers, so before and after compare field by field.
    server: async ({ sub }) => {
      const server = sub === undefined ? undefined : await store.getServer(sub);
      if (!server) return undefined;
      return serverView(context.config, server, (await store.listTools(server.subdomain)).length);
    },
    tool: async ({ sub, name }) =>
      sub === undefined || name === undefined ? undefined : store.getTool(sub, name),
    entry:
      (kind) =>
      async ({ sub, name }) =>
        sub === undefined || name === undefined ? undefined : store.getEntry(kind, sub, name),
    secret: async ({ sub, name }) => {
      if (sub === undefined || name === undefined) return undefined;
      const found = (await store.listSecrets(sub)).find((secret) => secret.name === name);
      return found ? { name: found.name, updatedAt: found.updatedAt } : undefined;
    },
    pool: async ({ sub, tool }) => {
      if (sub === undefined) return undefined;
      const unit = poolUnitOf(sub, tool ?? '');
      return context.pools.sizes().find((size) => size.unit === unit);
    },
    account: async ({ id }) => {
      const account = id === undefined ? undefined : await store.findAccount({ id });
      return account === undefined ? undefined : accountView(account);
    },
  };
}

/** An account as the API answers it: never its password hash or lock bookkeeping. */
export function accountView(account: AccountRecord) {
  return {
    id: account.id,
    email: account.email,
    name: account.name,
    role: account.role,
    servers: account.servers,
    password: account.passwordHash !== null,
    oidcSubject: account.oidcSubject,
    disabled: account.disabled,
    lastSignInAt: account.lastSignInAt,
    createdAt: account.createdAt,
    updatedAt: account.updatedAt,
  };
}
