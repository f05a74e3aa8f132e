/**
 * The ordered list of schema migrations, as code so they ship inside the
 * bundle. Names sort in the order they must run; never rename or edit a
 * released migration: add the next one.
 */
import type { Migration, MigrationProvider } from 'kysely';
import type { StoreDialectName } from '../store-dialect.js';
import { initialSchemaMigration } from './0001-initial.js';
import { serverLimitsMigration } from './0002-server-limits.js';
import { serverTenancyMigration } from './0003-server-tenancy.js';
import { replicasMigration } from './0004-replicas.js';
import { toolMetadataMigration } from './0005-tool-metadata.js';
import { serverEntriesMigration } from './0006-server-entries.js';
import { mcpSessionsMigration } from './0007-mcp-sessions.js';
import { accountsMigration } from './0008-accounts.js';
import { invocationRetentionMigration } from './0011-invocation-retention.js';
import { invocationProtocolMigration } from './0012-invocation-protocol.js';
import { toolsAsEntriesMigration } from './0013-tools-as-entries.js';

/** The migration provider for Kysely's Migrator, for one dialect. */
export function storeMigrations(dialect: StoreDialectName): MigrationProvider {
  return {
    async getMigrations(): Promise<Record<string, Migration>> {
      return {
        '0001-initial': initialSchemaMigration(dialect),
        '0002-server-limits': serverLimitsMigration,
        '0003-server-tenancy': serverTenancyMigration,
        '0004-replicas': replicasMigration,
        '0005-tool-metadata': toolMetadataMigration,
        '0006-server-entries': serverEntriesMigration,
        '0007-mcp-sessions': mcpSessionsMigration,
        '0008-accounts': accountsMigration(dialect),
        '0011-invocation-retention': invocationRetentionMigration,
        '0012-invocation-protocol': invocationProtocolMigration,
        '0013-tools-as-entries': toolsAsEntriesMigration(dialect),
      };
    },
  };
}
