/** The real test databases (see the environment variables), and direct clients for setup and checks. */
import mysql from 'mysql2/promise';
import pg from 'pg';

export type DatabaseType = 'pg' | 'mysql';

export interface TestDatabase {
  type: DatabaseType;
  connection: { host: string; port: number; database: string; user: string; password?: string };
  /** Runs administrative SQL outside the broker (creating and dropping tables). */
  admin(sql: string): Promise<unknown[]>;
  end(): Promise<void>;
}

/** Connection parameters of the given server, from env with the documented defaults. */
export function testConnection(type: DatabaseType): TestDatabase['connection'] {
  const env = process.env;
  if (type === 'pg') {
    return {
      host: env.PGHOST ?? '127.0.0.1',
      port: Number(env.PGPORT ?? 5432),
      database: env.PGDATABASE ?? 'test',
      user: env.PGUSER ?? 'postgres',
      ...(env.PGPASSWORD === undefined ? {} : { password: env.PGPASSWORD }),
    };
  }
  return {
    host: env.MYSQL_HOST ?? '127.0.0.1',
    port: Number(env.MYSQL_PORT ?? 3306),
    database: env.MYSQL_DATABASE ?? 'test',
    user: env.MYSQL_USER ?? 'root',
    password: env.MYSQL_PASSWORD ?? '',
  };
}

/** Opens a direct administrative client to the test database of `type`. */
export async function openTestDatabase(type: DatabaseType): Promise<TestDatabase> {
  const connection = testConnection(type);
  if (type === 'pg') {
    const client = new pg.Client({ ...connection });
    await client.connect();
    return {
      type,
      connection,
      admin: async (sql) => (await client.query(sql)).rows as unknown[],
      end: () => client.end(),
    };
  }
  const client = await mysql.createConnection({ ...connection });
  return {
    type,
    connection,
    admin: async (sql) => {
      const [rows] = await client.query(sql);
      return Array.isArray(rows) ? (rows as unknown[]) : [];
    },
    end: () => client.end(),
  };
}

/** A table name no other test run uses. */
export function uniqueTableName(prefix: string): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}
