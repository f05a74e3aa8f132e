/**
 * What every store query needs: the database, the dialect, the secret cipher,
 * the clock and the change feed; plus the two wrappers every operation goes
 * through. `write` runs a transaction (a failure changes nothing), announces
 * the change to other replicas inside it and to this process after commit.
 * Both turn driver failures into ERR_STORE and uniqueness races into ERR_CONFLICT.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { z } from 'zod';
import { summariseProblems, validationProblems } from '../validation-problems.js';
import { McphostError, isMcphostError } from '../errors.js';
import type { ChangeFeed, StoreChange } from './change-feed.js';
import type { StoreDatabase } from './database-schema.js';
import type { SecretCipher } from './secret-cipher.js';
import { messageOf, type StoreDialectName } from './store-dialect.js';
import type { VersionRetention } from './version-retention.js';

/** Shared state of one open store. */
export interface StoreContext {
  readonly db: Kysely<StoreDatabase>;
  readonly dialect: StoreDialectName;
  readonly cipher: SecretCipher;
  readonly feed: ChangeFeed;
  /** NOTIFY channel (PostgreSQL only). */
  readonly changeChannel: string;
  /** Current time as an ISO string. */
  readonly now: () => string;
  /** Invocation rows kept by pruning in all, beyond each server's floor (invocation-retention.ts). */
  readonly invocationRetention: number;
  /** Newest invocation rows each server keeps whatever the others log. */
  readonly invocationRetentionPerServer: number;
  /** Age past which refusal counts are pruned, in ms. */
  readonly refusalRetentionMs: number;
  /** Largest error message plus log lines of one invocation row, in bytes. */
  readonly invocationRowMaxBytes: number;
  /** Largest total of log lines in one listed page of invocations, in bytes. */
  readonly invocationPageMaxBytes: number;
  /** Largest total of one server's tools, prompts and resources as stored, in bytes. */
  readonly serverEntriesMaxBytes: number;
  /** How many saved versions of each definition are kept (version-retention.ts). */
  readonly versionRetention: VersionRetention;
  /** Largest contents of one static resource, in bytes (what one read answers). */
  readonly staticResourceMaxBytes: number;
}

/** Runs a read, mapping driver failures to ERR_STORE. */
export async function readOperation<T>(
  context: StoreContext,
  operation: string,
  body: (db: Kysely<StoreDatabase>) => Promise<T>,
): Promise<T> {
  try {
    return await body(context.db);
  } catch (error) {
    throw storeFailure(operation, error);
  }
}

/**
 * Runs one statement that writes runtime state (no configuration, nothing
 * announced) without a transaction around it — a single statement is atomic
 * on its own, and BEGIN/COMMIT would only add round trips on a hot path —
 * mapping failures as `writeOperation` does.
 */
export const statementOperation: typeof readOperation = readOperation;

/** Runs a write in one transaction and announces `change` once it committed. */
export async function writeOperation<T>(
  context: StoreContext,
  operation: string,
  change: StoreChange | null,
  body: (trx: Transaction<StoreDatabase>) => Promise<T>,
): Promise<T> {
  let result: T;
  try {
    result = await context.db.transaction().execute(async (trx) => {
      const value = await body(trx);
      if (change !== null && context.dialect === 'postgres') {
        // Inside the transaction: PostgreSQL delivers it only if the write commits.
        await sql`select pg_notify(${context.changeChannel}, ${context.feed.payload(change)})`.execute(
          trx,
        );
      }
      return value;
    });
  } catch (error) {
    throw storeFailure(operation, error);
  }
  if (change !== null) context.feed.emit(change);
  return result;
}

/** A McphostError for a failure of `operation`; McphostErrors pass through unchanged. */
export function storeFailure(operation: string, error: unknown): McphostError {
  if (isMcphostError(error)) return error;
  if (isUniqueViolation(error)) {
    return new McphostError('ERR_CONFLICT', `${operation}: changed concurrently, try again`, {
      cause: error,
    });
  }
  return new McphostError('ERR_STORE', `${operation} failed: ${messageOf(error)}`, {
    cause: error,
  });
}

/** True for a unique or primary-key violation of SQLite or PostgreSQL. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    code === '23505' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

/** Looks up a server's id by subdomain inside a query, or throws ERR_NOT_FOUND. */
export async function requireServerId(
  db: Kysely<StoreDatabase> | Transaction<StoreDatabase>,
  subdomain: string,
): Promise<string> {
  const row = await db
    .selectFrom('servers')
    .select('id')
    .where('subdomain', '=', subdomain)
    .executeTakeFirst();
  if (row === undefined) throw notFound(`server "${subdomain}"`);
  return row.id;
}

/** ERR_NOT_FOUND naming what is missing. */
export function notFound(what: string): McphostError {
  return new McphostError('ERR_NOT_FOUND', `${what} does not exist`);
}

/** Parses `input` with a zod schema; failures are ERR_VALIDATION listing every issue. */
export function validate<Schema extends z.ZodType>(
  schema: Schema,
  input: unknown,
  what: string,
): z.output<Schema> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw invalid(parsed.error, what);
}

/** ERR_VALIDATION listing every issue of a failed parse of `what`. */
export function invalid(error: z.ZodError, what: string): McphostError {
  const issues = validationProblems(error);
  return new McphostError('ERR_VALIDATION', `invalid ${what}: ${summariseProblems(issues)}`, {
    details: { issues },
  });
}
