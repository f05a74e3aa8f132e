/**
 * The store: one typed data layer over embedded SQLite (default) or
 * PostgreSQL (`databaseUrl`), holding servers, tools, prompts and resources
 * with their history,
 * encrypted secrets, pool settings, the invocation log and meta entries.
 * Every multi-row write is one transaction; every configuration write is
 * announced through `onChange`, across replicas on PostgreSQL. MCP sessions
 * are kept here too, as runtime state shared by the replicas (never
 * announced as configuration, never backed up).
 */
import { z } from 'zod';
import {
  CHANGE_CHANNEL_MAX_LENGTH,
  ChangeFeed,
  DEFAULT_CHANGE_CHANNEL,
  type StoreChange,
} from './change-feed.js';
import * as accounts from './account-queries.js';
import type {
  AccountPatch,
  AccountRecord,
  AdminSessionRecord,
  AuditEntry,
  AuditEntryInput,
  AuditPage,
  AuditQuery,
  CredentialKind,
  CredentialOwner,
  CredentialRecord,
  NewAccount,
  NewCredential,
} from './account-records.js';
import * as adminSessions from './admin-session-queries.js';
import * as audit from './audit-queries.js';
import * as backups from './backup.js';
import * as credentials from './credential-queries.js';
import type { StoreBackup } from './backup.js';
import * as entries from './entry-queries.js';
import type { EntryInputs, EntryKind, EntryRecord, EntryVersionRecord } from './entry-records.js';
import * as operations from './operations-queries.js';
import type {
  InvocationQuery,
  InvocationRecord,
  InvocationRecordInput,
  NewServer,
  PoolSettingsRecord,
  PoolSizing,
  SecretSummary,
  ServerRecord,
  ServerSettingsPatch,
  ToolDefinitionInput,
  ToolRecord,
  ToolVersionRecord,
} from './records.js';
import * as replicas from './replica-queries.js';
import * as secrets from './secret-queries.js';
import { SecretCipher } from './secret-cipher.js';
import * as servers from './server-queries.js';
import * as sessions from './session-queries.js';
import type {
  McpSessionQuotas,
  McpSessionRow,
  McpStreamEventRow,
  SessionSignal,
} from './session-records.js';
import { storeFailure, type StoreContext } from './store-context.js';
import { openStoreDatabase, type StoreDialectName } from './store-dialect.js';
import * as refusals from './refusal-queries.js';
import type { RefusalCount, RefusalQuery, RefusalTotal } from './refusal-records.js';
import type { VersionRetention } from './version-retention.js';

/** Options of `openStore`. */
export interface StoreOptions {
  /** Directory of the embedded database (`mcphost.db`); created if missing. */
  dataDir: string;
  /** PostgreSQL connection URL; when set the embedded database is not used. */
  databaseUrl?: string;
  /** 32-byte key encrypting secrets at rest (see `loadMasterKey`). */
  masterKey: Buffer;
  /** Invocation rows kept by `pruneInvocations` beyond each server's floor; default 10000. */
  invocationRetention?: number;
  /** Newest invocation rows each server keeps whatever the others log; default 1000, 0 = no floor. */
  invocationRetentionPerServer?: number;
  /** Refusal counts older than this are pruned, in hours; default 24. */
  refusalRetentionHours?: number;
  /** Largest error message plus log lines of one invocation row, in bytes; default 512 KiB. */
  invocationRowMaxBytes?: number;
  /** Largest total of log lines in one `listInvocations` page, in bytes; default 4 MiB. */
  invocationPageMaxBytes?: number;
  /** Receives operational messages; default: none. */
  log?: (message: string) => void;
  /** Largest total of one server's tools, prompts and resources as stored, in bytes; default 16 MiB. */
  serverEntriesMaxBytes?: number;
  /** Versions kept of each tool, prompt and resource, the current one included; default 20. */
  versionsKept?: number;
  /** Largest total of one definition's kept versions, in bytes (the current is always kept); default 4 MiB. */
  versionsMaxBytes?: number;
  /** Largest total of every kept version of one server's definitions, in bytes; default 64 MiB. */
  serverVersionsMaxBytes?: number;
  /** Largest contents of one static resource, in bytes; default 1 MiB. */
  staticResourceMaxBytes?: number;
  /**
   * False for tools beside the service (backup, token rotation): nothing is
   * migrated or created, and a store of another version is refused. Default true.
   */
  migrate?: boolean;
  /**
   * PostgreSQL NOTIFY channel shared by replicas, at most 54 characters (session
   * signals use it with `_sessions` appended); default `mcphost_config_changed`.
   */
  changeChannel?: string;
  /** Clock for record timestamps; default `() => new Date()`. */
  now?: () => Date;
}

const optionsSchema = z.object({
  dataDir: z.string().min(1),
  databaseUrl: z.string().min(1).optional(),
  invocationRetention: z.number().int().min(0).default(10_000),
  invocationRetentionPerServer: z.number().int().min(0).default(1000),
  refusalRetentionHours: z.number().int().min(1).default(24),
  invocationRowMaxBytes: z
    .number()
    .int()
    .min(1024)
    .default(512 * 1024),
  invocationPageMaxBytes: z
    .number()
    .int()
    .min(1024)
    .default(4 * 1024 * 1024),
  serverEntriesMaxBytes: z
    .number()
    .int()
    .min(0)
    .default(16 * 1024 * 1024),
  staticResourceMaxBytes: z
    .number()
    .int()
    .min(1)
    .default(1024 * 1024),
  versionsKept: z.number().int().min(1).default(20),
  versionsMaxBytes: z
    .number()
    .int()
    .min(1)
    .default(4 * 1024 * 1024),
  serverVersionsMaxBytes: z
    .number()
    .int()
    .min(1)
    .default(64 * 1024 * 1024),
  changeChannel: z
    .string()
    .max(CHANGE_CHANNEL_MAX_LENGTH)
    .regex(/^[a-z_][a-z0-9_]*$/)
    .default(DEFAULT_CHANGE_CHANNEL),
});

/** The store's API. */
export interface Store {
  /** 'sqlite' (embedded) or 'postgres'. */
  readonly dialect: StoreDialectName;
  /** How many versions of each tool, prompt and resource are kept (older ones are pruned at save). */
  readonly versionRetention: VersionRetention;

  /** Every server, ordered by subdomain. */
  listServers(): Promise<ServerRecord[]>;
  /** One server, or undefined. */
  getServer(subdomain: string): Promise<ServerRecord | undefined>;
  /** Creates a server (mode "none", active); a taken subdomain is ERR_CONFLICT. */
  createServer(input: NewServer): Promise<ServerRecord>;
  /** Changes settings; ERR_NOT_FOUND, ERR_VALIDATION. */
  updateServerSettings(subdomain: string, patch: ServerSettingsPatch): Promise<ServerRecord>;
  /** Deletes a server with its tools, versions, secrets and pool settings. */
  deleteServer(subdomain: string): Promise<void>;

  // Tools are entries of kind 'tool' (entry-queries.ts): these read as the rest of the code speaks.
  /** The tools of a server, ordered by name. */
  listTools(subdomain: string): Promise<ToolRecord[]>;
  /** One tool, or undefined. */
  getTool(subdomain: string, name: string): Promise<ToolRecord | undefined>;
  /** Creates or replaces a tool: version + 1 and a new snapshot in its history (older ones pruned). */
  saveTool(subdomain: string, name: string, definition: ToolDefinitionInput): Promise<ToolRecord>;
  /** Deletes a tool with its history and pool settings. */
  deleteTool(subdomain: string, name: string): Promise<void>;
  /** Every kept version, newest first. */
  listToolVersions(subdomain: string, name: string): Promise<ToolVersionRecord[]>;
  /** Saves the snapshot of an old version as a new version. */
  rollbackTool(subdomain: string, name: string, version: number): Promise<ToolRecord>;

  /** A server's entries of one kind, ordered by name. */
  listEntries<K extends EntryKind>(kind: K, subdomain: string): Promise<EntryRecord<K>[]>;
  /** One prompt or resource, or undefined. */
  getEntry<K extends EntryKind>(
    kind: K,
    subdomain: string,
    name: string,
  ): Promise<EntryRecord<K> | undefined>;
  /** Creates or replaces a prompt or resource: version + 1 and a new snapshot. */
  saveEntry<K extends EntryKind>(
    kind: K,
    subdomain: string,
    name: string,
    definition: EntryInputs[K],
  ): Promise<EntryRecord<K>>;
  /** Deletes a prompt or resource with its history. */
  deleteEntry(kind: EntryKind, subdomain: string, name: string): Promise<void>;
  /** Every kept version of a prompt or resource, newest first. */
  listEntryVersions<K extends EntryKind>(
    kind: K,
    subdomain: string,
    name: string,
  ): Promise<EntryVersionRecord<K>[]>;
  /** Saves the snapshot of an old version as a new version. */
  rollbackEntry<K extends EntryKind>(
    kind: K,
    subdomain: string,
    name: string,
    version: number,
  ): Promise<EntryRecord<K>>;

  /** Secret names and update times, never values. */
  listSecrets(subdomain: string): Promise<SecretSummary[]>;
  /** Creates or replaces a secret (encrypted at rest). */
  putSecret(subdomain: string, name: string, value: string): Promise<SecretSummary>;
  /** Deletes a secret. */
  deleteSecret(subdomain: string, name: string): Promise<void>;
  /** Decrypted secrets of a server, for the configuration cache only. */
  readSecrets(subdomain: string): Promise<Record<string, string>>;

  /** All stored pool sizings. */
  getPoolSettings(): Promise<PoolSettingsRecord[]>;
  /** Stores one tool's pool sizing. */
  putPoolSettings(subdomain: string, tool: string, sizing: PoolSizing): Promise<PoolSettingsRecord>;

  /** Appends invocation entries in one transaction. */
  appendInvocations(entries: readonly InvocationRecordInput[]): Promise<void>;
  /** Invocation entries, newest first (limit default 100, at most 1000). */
  listInvocations(query?: InvocationQuery): Promise<InvocationRecord[]>;
  /** Prunes the log per server (invocation-retention.ts) and old refusal counts; returns how many rows went. */
  pruneInvocations(): Promise<number>;
  /** Adds counts of calls refused before any code ran (per server, code and bucket). */
  countRefusals(counts: readonly RefusalCount[]): Promise<void>;
  /** Refusal counts by bucket, newest first. */
  listRefusals(query?: RefusalQuery): Promise<RefusalCount[]>;
  /** Refusal counts summed per server and code. */
  sumRefusals(query?: RefusalQuery): Promise<RefusalTotal[]>;

  /** A meta value (e.g. the admin token hash), or undefined. */
  getMeta(key: string): Promise<string | undefined>;
  /** Sets a meta value. */
  setMeta(key: string, value: string): Promise<void>;

  /** Marks this replica alive, forgets silent ones; returns the live replicas (at least 1). */
  heartbeatReplica(replicaId: string, staleAfterMs: number): Promise<number>;
  /** Forgets this replica (at shutdown). */
  removeReplica(replicaId: string): Promise<void>;

  /** Stores a new MCP session, created and last used now; a taken id is ERR_CONFLICT. */
  createMcpSession(row: Omit<McpSessionRow, 'createdAt' | 'lastUsedAt'>): Promise<void>;
  /**
   * Stores a new MCP session within its caller's and server's quotas, counted
   * over every replica; returns the sessions it replaced (each signalled
   * 'evicted'); ERR_SESSION_QUOTA when the server's are all in use.
   */
  admitMcpSession(
    row: Omit<McpSessionRow, 'createdAt' | 'lastUsedAt'>,
    quotas: McpSessionQuotas,
  ): Promise<string[]>;
  /** One MCP session (a primary-key lookup), or undefined. */
  getMcpSession(id: string): Promise<McpSessionRow | undefined>;
  /** Replaces a session's state; false if there is no such session. Signals 'changed'. */
  updateMcpSessionState(id: string, state: string): Promise<boolean>;
  /** Deletes a session with its stream events; false if there was none. Signals 'ended'. */
  deleteMcpSession(id: string): Promise<boolean>;
  /** Deletes every session of a server with their events; returns how many. Signals 'ended' for each. */
  deleteMcpSessionsOf(subdomain: string): Promise<number>;
  /** Marks sessions used now, in one statement for a batch; [] does nothing. Signals nothing. */
  touchMcpSessions(ids: readonly string[]): Promise<void>;
  /**
   * Deletes sessions unused for `idleMs` milliseconds with their events, and
   * relayed messages older than 60 s; returns how many sessions. Signals 'ended' for each.
   */
  pruneMcpSessions(idleMs: number): Promise<number>;
  /** Appends stream events in one insert; with `signal`, one 'events' signal per distinct stream. */
  appendMcpStreamEvents(events: readonly McpStreamEventRow[], signal: boolean): Promise<void>;
  /** Up to `limit` events of a stream with seq above `afterSeq`, ordered by seq. */
  readMcpStreamEvents(
    sessionId: string,
    streamId: string,
    afterSeq: number,
    limit: number,
  ): Promise<McpStreamEventRow[]>;
  /**
   * Deletes the streams whose newest event is older than `olderThanMs`, or
   * whose answer is older than `answeredOlderThanMs` (default the same), in
   * milliseconds; returns how many events.
   */
  pruneMcpStreamEvents(olderThanMs: number, answeredOlderThanMs?: number): Promise<number>;
  /** Deletes every event of one stream; returns how many. */
  deleteMcpStream(sessionId: string, streamId: string): Promise<number>;
  /** Stores a client message for whichever replica awaits it; signals 'message' with its ref. */
  relayMcpSessionMessage(sessionId: string, message: string): Promise<void>;
  /** A relayed message by ref, or undefined (unknown, or pruned after 60 s). */
  takeMcpSessionMessage(ref: string): Promise<{ sessionId: string; message: string } | undefined>;
  /**
   * Calls `listener` with other replicas' session signals (PostgreSQL only:
   * never for this store's own writes, never on SQLite), and with 'resync'
   * after the listener connection was re-established.
   */
  onSessionSignal(listener: (signal: SessionSignal) => void): () => void;

  /** Every admin account, ordered by e-mail. */
  listAccounts(): Promise<AccountRecord[]>;
  /** One account by id, e-mail or OpenID identity, or undefined. */
  findAccount(
    by: { id: string } | { email: string } | { oidcIssuer: string; oidcSubject: string },
  ): Promise<AccountRecord | undefined>;
  /** Creates an account; ERR_CONFLICT for a taken e-mail, ERR_VALIDATION for an unknown server. */
  createAccount(input: NewAccount): Promise<AccountRecord>;
  /** Changes an account (ending its sessions when its authority changed); the last owner stays (ERR_CONFLICT). */
  updateAccount(id: string, patch: AccountPatch): Promise<AccountRecord>;
  /** Deletes an account with its sessions and tokens; the last owner stays (ERR_CONFLICT). */
  deleteAccount(id: string): Promise<void>;
  /** Claims a password attempt before the check: refused while locked, else counted as a failure until `recordSignIn`. */
  claimSignInAttempt(
    id: string,
    lockMsFor: (failures: number) => number,
  ): Promise<{ allowed: true; failures: number } | { allowed: false; lockedUntil: string }>;
  /** Records a sign-in (clears failures), linking an OpenID identity when given. */
  recordSignIn(id: string, link?: { oidcIssuer: string; oidcSubject: string }): Promise<void>;

  /** Stores a dashboard session. */
  createAdminSession(session: Omit<AdminSessionRecord, 'createdAt' | 'lastUsedAt'>): Promise<void>;
  /** A dashboard session by the SHA-256 (hex) of its cookie value. */
  getAdminSession(idHash: string): Promise<AdminSessionRecord | undefined>;
  /** Marks a dashboard session used now. */
  touchAdminSession(idHash: string): Promise<void>;
  /** Ends a dashboard session; false when there was none. */
  deleteAdminSession(idHash: string): Promise<boolean>;
  /** Deletes expired sessions and those unused since `idleBefore`; returns how many. */
  pruneAdminSessions(idleBefore: string): Promise<number>;

  /** Stores a new API key or personal token (by its hash). */
  createCredential(input: NewCredential): Promise<CredentialRecord>;
  /** A server's API keys or an account's tokens, newest first. */
  listCredentials(owner: CredentialOwner): Promise<CredentialRecord[]>;
  /** The credential whose secret has this SHA-256 (hex), or undefined. */
  findCredential(kind: CredentialKind, secretHash: string): Promise<CredentialRecord | undefined>;
  /** Revokes a credential of its owner; ERR_NOT_FOUND when the owner has none of this id. */
  revokeCredential(owner: CredentialOwner, id: string): Promise<CredentialRecord>;
  /** Marks credentials used now, in one statement. */
  touchCredentials(ids: readonly string[]): Promise<void>;

  /** Appends one audit entry. */
  appendAudit(entry: AuditEntryInput): Promise<AuditEntry>;
  /** Replaces an audit entry's summary (a refusal entry's count, when its minute ends). */
  setAuditSummary(id: string, summary: AuditEntryInput['summary']): Promise<void>;
  /** A page of the audit log, newest first; `visibleServers` limits it to those servers' entries. */
  listAudit(query: AuditQuery, visibleServers?: readonly string[]): Promise<AuditPage>;
  /** Deletes audit entries older than `before` (ISO); returns how many. */
  pruneAudit(before: string): Promise<number>;

  /** Every configuration table as one JSON document (see backup.ts). */
  exportBackup(): Promise<StoreBackup>;
  /** Restores a backup in one transaction; refuses a non-empty store unless `replace`. */
  importBackup(
    backup: unknown,
    options: { replace: boolean },
  ): Promise<{ servers: number; tools: number; secrets: number }>;

  /** Calls `listener` after every configuration write here and, on PostgreSQL, by other replicas. */
  onChange(listener: (change: StoreChange) => void): () => void;
  /** Stops listening and closes the database; the store is unusable afterwards. */
  close(): Promise<void>;
}

/** Opens (and migrates) the store. */
export async function openStore(options: StoreOptions): Promise<Store> {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) throw new TypeError(`openStore: invalid options: ${parsed.error.message}`);
  const log = options.log ?? (() => undefined);
  const clock = options.now ?? (() => new Date());
  const cipher = new SecretCipher(options.masterKey);
  const { databaseUrl, changeChannel } = parsed.data;

  const { db, dialect } = await openStoreDatabase({
    dataDir: parsed.data.dataDir,
    databaseUrl,
    log,
    migrate: options.migrate,
  });
  const feed = new ChangeFeed(log);
  if (databaseUrl !== undefined) {
    try {
      await feed.listenToPostgres(databaseUrl, changeChannel);
    } catch (error) {
      await db.destroy().catch(() => undefined);
      throw storeFailure('listening for configuration changes on PostgreSQL', error);
    }
  }
  const context: StoreContext = {
    db,
    dialect,
    cipher,
    feed,
    changeChannel,
    now: () => clock().toISOString(),
    invocationRetention: parsed.data.invocationRetention,
    invocationRetentionPerServer: parsed.data.invocationRetentionPerServer,
    refusalRetentionMs: parsed.data.refusalRetentionHours * 3_600_000,
    invocationRowMaxBytes: parsed.data.invocationRowMaxBytes,
    invocationPageMaxBytes: parsed.data.invocationPageMaxBytes,
    serverEntriesMaxBytes: parsed.data.serverEntriesMaxBytes,
    staticResourceMaxBytes: parsed.data.staticResourceMaxBytes,
    versionRetention: Object.freeze({
      versionsKept: parsed.data.versionsKept,
      maxBytes: parsed.data.versionsMaxBytes,
      serverMaxBytes: parsed.data.serverVersionsMaxBytes,
    }),
  };

  let closed: Promise<void> | undefined;
  return {
    dialect,
    versionRetention: context.versionRetention,
    listServers: () => servers.listServers(context),
    getServer: (subdomain) => servers.getServer(context, subdomain),
    createServer: (input) => servers.createServer(context, input),
    updateServerSettings: (subdomain, patch) =>
      servers.updateServerSettings(context, subdomain, patch),
    deleteServer: (subdomain) => servers.deleteServer(context, subdomain),
    listTools: (subdomain) => entries.listEntries(context, 'tool', subdomain),
    getTool: (subdomain, name) => entries.getEntry(context, 'tool', subdomain, name),
    saveTool: (subdomain, name, definition) =>
      entries.saveEntry(context, 'tool', subdomain, name, definition),
    deleteTool: (subdomain, name) => entries.deleteEntry(context, 'tool', subdomain, name),
    listToolVersions: (subdomain, name) =>
      entries.listEntryVersions(context, 'tool', subdomain, name),
    rollbackTool: (subdomain, name, version) =>
      entries.rollbackEntry(context, 'tool', subdomain, name, version),
    listEntries: (kind, subdomain) => entries.listEntries(context, kind, subdomain),
    getEntry: (kind, subdomain, name) => entries.getEntry(context, kind, subdomain, name),
    saveEntry: (kind, subdomain, name, definition) =>
      entries.saveEntry(context, kind, subdomain, name, definition),
    deleteEntry: (kind, subdomain, name) => entries.deleteEntry(context, kind, subdomain, name),
    listEntryVersions: (kind, subdomain, name) =>
      entries.listEntryVersions(context, kind, subdomain, name),
    rollbackEntry: (kind, subdomain, name, version) =>
      entries.rollbackEntry(context, kind, subdomain, name, version),
    listSecrets: (subdomain) => secrets.listSecrets(context, subdomain),
    putSecret: (subdomain, name, value) => secrets.putSecret(context, subdomain, name, value),
    deleteSecret: (subdomain, name) => secrets.deleteSecret(context, subdomain, name),
    readSecrets: (subdomain) => secrets.readSecrets(context, subdomain),
    getPoolSettings: () => operations.getPoolSettings(context),
    putPoolSettings: (subdomain, tool, sizing) =>
      operations.putPoolSettings(context, subdomain, tool, sizing),
    appendInvocations: (entries) => operations.appendInvocations(context, entries),
    listInvocations: (query) => operations.listInvocations(context, query),
    pruneInvocations: () => operations.pruneInvocations(context),
    countRefusals: (counts) => refusals.countRefusals(context, counts),
    listRefusals: (query) => refusals.listRefusals(context, query),
    sumRefusals: (query) => refusals.sumRefusals(context, query),
    getMeta: (key) => operations.getMeta(context, key),
    setMeta: (key, value) => operations.setMeta(context, key, value),
    heartbeatReplica: (replicaId, staleAfterMs) =>
      replicas.heartbeatReplica(context, replicaId, staleAfterMs),
    removeReplica: (replicaId) => replicas.removeReplica(context, replicaId),
    createMcpSession: (row) => sessions.createMcpSession(context, row),
    admitMcpSession: (row, quotas) => sessions.admitMcpSession(context, row, quotas),
    getMcpSession: (id) => sessions.getMcpSession(context, id),
    updateMcpSessionState: (id, state) => sessions.updateMcpSessionState(context, id, state),
    deleteMcpSession: (id) => sessions.deleteMcpSession(context, id),
    deleteMcpSessionsOf: (subdomain) => sessions.deleteMcpSessionsOf(context, subdomain),
    touchMcpSessions: (ids) => sessions.touchMcpSessions(context, ids),
    pruneMcpSessions: (idleMs) => sessions.pruneMcpSessions(context, idleMs),
    appendMcpStreamEvents: (events, signal) =>
      sessions.appendMcpStreamEvents(context, events, signal),
    readMcpStreamEvents: (sessionId, streamId, afterSeq, limit) =>
      sessions.readMcpStreamEvents(context, sessionId, streamId, afterSeq, limit),
    pruneMcpStreamEvents: (olderThanMs, answeredOlderThanMs) =>
      sessions.pruneMcpStreamEvents(context, olderThanMs, answeredOlderThanMs),
    deleteMcpStream: (sessionId, streamId) =>
      sessions.deleteMcpStream(context, sessionId, streamId),
    relayMcpSessionMessage: (sessionId, message) =>
      sessions.relayMcpSessionMessage(context, sessionId, message),
    takeMcpSessionMessage: (ref) => sessions.takeMcpSessionMessage(context, ref),
    onSessionSignal: (listener) => feed.subscribeToSessions(listener),
    listAccounts: () => accounts.listAccounts(context),
    findAccount: (by) => accounts.findAccount(context, by),
    createAccount: (input) => accounts.createAccount(context, input),
    updateAccount: (id, patch) => accounts.updateAccount(context, id, patch),
    deleteAccount: (id) => accounts.deleteAccount(context, id),
    claimSignInAttempt: (id, lockMsFor) => accounts.claimSignInAttempt(context, id, lockMsFor),
    recordSignIn: (id, link) => accounts.recordSignIn(context, id, link),
    createAdminSession: (session) => adminSessions.createAdminSession(context, session),
    getAdminSession: (idHash) => adminSessions.getAdminSession(context, idHash),
    touchAdminSession: (idHash) => adminSessions.touchAdminSession(context, idHash),
    deleteAdminSession: (idHash) => adminSessions.deleteAdminSession(context, idHash),
    pruneAdminSessions: (idleBefore) => adminSessions.pruneAdminSessions(context, idleBefore),
    createCredential: (input) => credentials.createCredential(context, input),
    listCredentials: (owner) => credentials.listCredentials(context, owner),
    findCredential: (kind, secretHash) => credentials.findCredential(context, kind, secretHash),
    revokeCredential: (owner, id) => credentials.revokeCredential(context, owner, id),
    touchCredentials: (ids) => credentials.touchCredentials(context, ids),
    appendAudit: (entry) => audit.appendAudit(context, entry),
    setAuditSummary: (id, summary) => audit.setAuditSummary(context, id, summary),
    listAudit: (query, visibleServers) => audit.listAudit(context, query, visibleServers),
    pruneAudit: (before) => audit.pruneAudit(context, before),
    exportBackup: () => backups.exportBackup(context),
    importBackup: (backup, options) => backups.importBackup(context, backup, options),
    onChange: (listener) => feed.subscribe(listener),
    close: () => {
      closed ??= feed.close().then(() => db.destroy());
      return closed;
    },
  };
}
