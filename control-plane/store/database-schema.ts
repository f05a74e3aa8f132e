/**
 * Row shapes of the store's tables as Kysely sees them. Kept portable across
 * SQLite and PostgreSQL: timestamps are ISO 8601 text, booleans are 0/1
 * integers, JSON is text (parsed in `row-mapping.ts`).
 */
import type { Generated } from 'kysely';

export interface ServersTable {
  id: string;
  subdomain: string;
  name: string;
  security_mode: string;
  oauth_server_url: string | null;
  /** JSON of the AS metadata snapshot, or null. */
  oauth_metadata: string | null;
  oauth_audience: string | null;
  /** JSON array of scope strings. */
  oauth_required_scopes: string;
  /** JSON object {timeoutMs?, memoryMb?}: defaults for the server's tools. */
  limits: Generated<string>;
  /** JSON object of the tenancy settings (see `serverTenancySchema`); `{}` = the defaults. */
  tenancy: Generated<string>;
  active: number;
  created_at: string;
  updated_at: string;
}

export interface SecretsTable {
  server_id: string;
  name: string;
  /** `v1:` + base64(iv ‖ tag ‖ ciphertext), see `secret-cipher.ts`. */
  ciphertext: string;
  updated_at: string;
}

export interface PoolSettingsTable {
  server_id: string;
  tool_name: string;
  min_warm: number;
  max_size: number;
  updated_at: string;
}

export interface InvocationsTable {
  /** Insertion order; retention keeps the highest ones. */
  seq: Generated<number>;
  id: string;
  at: string;
  server: string;
  tool: string;
  version: number;
  duration_ms: number;
  ok: number;
  error_code: string | null;
  error_message: string | null;
  /** JSON array of {level, text}. */
  logs: string;
  /** JSON of the caller description. */
  caller: string;
  request_id: string | null;
  /** What ran: tool, prompt, resource or completion (migration 0006). */
  kind: Generated<string>;
  /** The client's address (migration 0006); null when unknown or before it. */
  client_address: string | null;
  /** The MCP era of the call: legacy or modern (migration 0012); null for a test run. */
  era: string | null;
  /** Times the call waited on its client for input (migration 0012). */
  input_rounds: Generated<number>;
}

/** Calls refused before any code ran, counted per server, error code and time bucket (migration 0011). */
export interface InvocationRefusalsTable {
  server: string;
  code: string;
  /** Start of the bucket, ISO 8601 UTC; a multiple of the bucket width. */
  bucket_start: string;
  count: number;
}

/** A prompt or resource of a server (migration 0006). */
export interface ServerEntriesTable {
  id: string;
  server_id: string;
  /** 'tool', 'prompt' or 'resource' (tools since migration 0013). */
  kind: string;
  name: string;
  /** JSON of the validated definition. */
  definition: string;
  /** UTF-8 bytes of `definition` (a server's total is bounded). */
  stored_bytes: number;
  /** A static resource's uri; null otherwise. */
  uri: string | null;
  /** A resource template's uriTemplate; null otherwise. */
  uri_template: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface ServerEntryVersionsTable {
  entry_id: string;
  version: number;
  definition: string;
  saved_at: string;
}

export interface MetaTable {
  key: string;
  value: string;
}

/** One live control-plane replica (heartbeat). */
export interface ReplicasTable {
  id: string;
  seen_at: string;
}

/** One MCP session shared by the replicas (migration 0007); runtime state, never backed up. */
export interface McpSessionsTable {
  id: string;
  subdomain: string;
  caller_key: string;
  quota_key: string;
  /** JSON document the MCP layer owns. */
  state: string;
  created_at: string;
  last_used_at: string;
}

/** One event of an MCP response stream, kept for resumption on any replica (migration 0007). */
export interface McpStreamEventsTable {
  session_id: string;
  stream_id: string;
  /** 0 is the stream's opening marker (message ""). */
  seq: number;
  /** JSON text of a JSON-RPC message. */
  message: string;
  /** 1 on the stream's last event. */
  final: number;
  created_at: string;
}

/** A client message relayed to the replica that awaits it (migration 0007); pruned after a minute. */
export interface McpSessionMessagesTable {
  id: string;
  session_id: string;
  message: string;
  created_at: string;
}

/** An admin account (migration 0008). */
export interface AccountsTable {
  id: string;
  /** Lower case; unique. */
  email: string;
  name: string;
  /** owner, admin, operator or viewer. */
  role: string;
  /** `scrypt$…` (control-plane/identity/accounts/password-hash.ts); null: no local sign-in. */
  password_hash: string | null;
  /** The OpenID Connect issuer `oidc_subject` belongs to. */
  oidc_issuer: string | null;
  oidc_subject: string | null;
  disabled: number;
  /** Consecutive failed sign-ins (the lock schedule counts them). */
  failed_sign_ins: number;
  locked_until: string | null;
  last_sign_in_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The servers an operator account may operate (migration 0008). */
export interface AccountServersTable {
  account_id: string;
  server_id: string;
}

/** A dashboard session (migration 0008); the cookie's value is never stored, its SHA-256 is. */
export interface AdminSessionsTable {
  id_hash: string;
  account_id: string;
  csrf_token: string;
  created_at: string;
  last_used_at: string;
  expires_at: string;
}

/** A hosted server's API key or an account's personal token (migration 0008), by its SHA-256. */
export interface CredentialsTable {
  id: string;
  /** 'apikey' (server_id set) or 'personal' (account_id set). */
  kind: string;
  server_id: string | null;
  account_id: string | null;
  label: string;
  /** The first characters of the secret, to tell keys apart in lists. */
  prefix: string;
  secret_hash: string;
  /** Who created it (the actor's label). */
  created_by: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** One audit entry (migration 0008). */
export interface AuditLogTable {
  seq: Generated<number>;
  id: string;
  at: string;
  actor_kind: string;
  actor_id: string | null;
  actor_label: string;
  action: string;
  server: string | null;
  target: string | null;
  outcome: string;
  client_address: string | null;
  request_id: string | null;
  /** JSON of {before?, after?, note?}. */
  summary: string;
}

/** The whole database as Kysely types it. */
export interface StoreDatabase {
  servers: ServersTable;
  secrets: SecretsTable;
  pool_settings: PoolSettingsTable;
  server_entries: ServerEntriesTable;
  server_entry_versions: ServerEntryVersionsTable;
  invocations: InvocationsTable;
  invocation_refusals: InvocationRefusalsTable;
  meta: MetaTable;
  replicas: ReplicasTable;
  mcp_sessions: McpSessionsTable;
  mcp_stream_events: McpStreamEventsTable;
  mcp_session_messages: McpSessionMessagesTable;
  accounts: AccountsTable;
  account_servers: AccountServersTable;
  admin_sessions: AdminSessionsTable;
  credentials: CredentialsTable;
  audit_log: AuditLogTable;
}
