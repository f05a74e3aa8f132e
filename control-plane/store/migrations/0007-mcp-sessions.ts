/**
 * MCP sessions shared by the control-plane replicas (see session-records.ts):
 * the session rows, the events of their response streams (so a stream
 * resumes on any replica) and client messages relayed between replicas.
 * Runtime state, not configuration: never in backups, and no foreign key to
 * servers (a restore replaces servers without touching sessions; the MCP
 * layer deletes a server's sessions itself).
 */
import type { Kysely, Migration } from 'kysely';

export const mcpSessionsMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('mcp_sessions')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('subdomain', 'text', (column) => column.notNull())
      .addColumn('caller_key', 'text', (column) => column.notNull())
      .addColumn('quota_key', 'text', (column) => column.notNull())
      .addColumn('state', 'text', (column) => column.notNull())
      .addColumn('created_at', 'text', (column) => column.notNull())
      .addColumn('last_used_at', 'text', (column) => column.notNull())
      .execute();
    // A server's sessions are deleted together; idle ones are pruned by last use.
    await db.schema
      .createIndex('mcp_sessions_subdomain')
      .on('mcp_sessions')
      .column('subdomain')
      .execute();
    await db.schema
      .createIndex('mcp_sessions_last_used_at')
      .on('mcp_sessions')
      .column('last_used_at')
      .execute();
    // No foreign key to mcp_sessions: an append racing a session's deletion on
    // another replica must not fail; such leftovers age out with their stream.
    await db.schema
      .createTable('mcp_stream_events')
      .addColumn('session_id', 'text', (column) => column.notNull())
      .addColumn('stream_id', 'text', (column) => column.notNull())
      .addColumn('seq', 'integer', (column) => column.notNull())
      .addColumn('message', 'text', (column) => column.notNull())
      .addColumn('final', 'integer', (column) => column.notNull())
      .addColumn('created_at', 'text', (column) => column.notNull())
      .addPrimaryKeyConstraint('mcp_stream_events_pk', ['session_id', 'stream_id', 'seq'])
      .execute();
    await db.schema
      .createTable('mcp_session_messages')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('session_id', 'text', (column) => column.notNull())
      .addColumn('message', 'text', (column) => column.notNull())
      .addColumn('created_at', 'text', (column) => column.notNull())
      .execute();
    // Relayed messages are pruned by age every minute.
    await db.schema
      .createIndex('mcp_session_messages_created_at')
      .on('mcp_session_messages')
      .column('created_at')
      .execute();
  },
};
