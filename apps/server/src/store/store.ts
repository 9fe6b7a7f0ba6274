import { type Kysely, Migrator, sql } from 'kysely';
import { createMigrationProvider, type SqlDialect } from './migrations/index.js';
import { openPostgres } from './postgres.js';
import type { Database } from './schema.js';
import { openSqlite } from './sqlite.js';

/** A handle on the database: queries run on `db`, or inside `transaction`. */
export interface Store {
  readonly dialect: SqlDialect;
  readonly db: Kysely<Database>;
  /**
   * Runs `work` in one transaction. On SQLite the transaction takes the write lock up front
   * (`BEGIN IMMEDIATE`) so two processes never deadlock upgrading a read lock.
   */
  transaction<T>(work: (trx: Kysely<Database>) => Promise<T>): Promise<T>;
  migrate(): Promise<string[]>;
  close(): Promise<void>;
}

export type StoreOptions =
  | { kind: 'sqlite'; path: string }
  | {
      kind: 'postgres';
      url: string;
      poolSize?: number;
      onQuery?: (sql: string, parameters: readonly unknown[]) => void;
    };

/** Opens the store the configuration names: the SQLite file, or the PostgreSQL database. */
export async function openStore(options: StoreOptions): Promise<Store> {
  if (options.kind === 'postgres') {
    const { db, close } = openPostgres(options);
    return createStore(db, 'postgres', close);
  }
  const { db, close } = openSqlite({ path: options.path });
  return createStore(db, 'sqlite', close);
}

export function createStore(db: Kysely<Database>, dialect: SqlDialect, close: () => Promise<void>): Store {
  return {
    dialect,
    db,
    async transaction(work) {
      if (dialect !== 'sqlite') return db.transaction().execute(work);
      return db.connection().execute(async (connection) => {
        await sql`begin immediate`.execute(connection);
        try {
          const result = await work(connection);
          await sql`commit`.execute(connection);
          return result;
        } catch (error) {
          await sql`rollback`.execute(connection);
          throw error;
        }
      });
    },
    async migrate() {
      const migrator = new Migrator({ db, provider: createMigrationProvider({ dialect }) });
      const { error, results } = await migrator.migrateToLatest();
      if (error) {
        throw new Error(`database migration failed: ${(error as Error).message ?? String(error)}`, {
          cause: error,
        });
      }
      return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    },
    close,
  };
}
