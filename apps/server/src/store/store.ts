import { type Kysely, Migrator } from 'kysely';
import type { SqlDialect } from './engine/dialect.js';
import type { DirectRun } from './engine/direct-run.js';
import { createGroupCommit } from './engine/group-commit.js';
import { openPostgres } from './engine/postgres.js';
import { createSharedTransactions } from './engine/shared-transactions.js';
import { type GroupSync, openSqlite } from './engine/sqlite.js';
import { createMigrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';

/** A handle on the database: queries run on `db`, or inside `transaction`. */
export interface Store {
  readonly dialect: SqlDialect;
  readonly db: Kysely<Database>;
  /**
   * Runs `work` in one transaction and resolves once it is committed. On SQLite the transaction
   * takes the write lock up front (`BEGIN IMMEDIATE`) so two processes never deadlock upgrading a
   * read lock, and transactions asked for together share one COMMIT (engine/group-commit.ts).
   */
  transaction<T>(work: (trx: Kysely<Database>) => Promise<T>): Promise<T>;
  /**
   * `transaction`, in a transaction it may share with other units asked for at the same time. On
   * PostgreSQL the units run interleaved and their shared statements are sent once for all of
   * them (engine/shared-transactions.ts); `work` may then run a second time, alone, so it must have
   * no effect outside the transaction before it resolves, and every row it writes that another
   * unit may write too must go through a shared statement. On SQLite its units share a COMMIT
   * already, one after another; `work` runs there without a savepoint of its own, and may run a
   * second time if another unit of its group fails (engine/group-commit.ts, `rerunnable`).
   */
  sharedTransaction<T>(work: (trx: Kysely<Database>) => Promise<T>): Promise<T>;
  migrate(): Promise<string[]>;
  close(): Promise<void>;
  /**
   * Has `close` first wait for `drain`: writes collected to be sent together, whose callers wait
   * for their answer (engine/statement-batches.ts), are sent before the connections go.
   */
  drainOnClose(drain: () => Promise<void>): void;
  /**
   * Calls `listener` with every error the database driver raises (classified by engine/store-errors.ts);
   * returns the function that stops it. The store-errors metric listens here.
   */
  onError(listener: (error: unknown) => void): () => void;
}

export type StoreOptions =
  | { kind: 'sqlite'; path: string; backgroundCheckpoint?: boolean }
  | {
      kind: 'postgres';
      url: string;
      poolSize?: number;
      preparedStatements?: boolean;
      onQuery?: (sql: string, parameters: readonly unknown[]) => void;
    };

/** Opens the store the configuration names: the SQLite file, or the PostgreSQL database. */
export async function openStore(options: StoreOptions): Promise<Store> {
  const listeners = new Set<(error: unknown) => void>();
  const onError = (error: unknown) => {
    for (const listener of listeners) listener(error);
  };
  if (options.kind === 'postgres') {
    const { db, close } = openPostgres({ ...options, onError });
    return createStore(db, 'postgres', close, undefined, listeners);
  }
  const { db, close, syncWal, run, groupSync } = openSqlite({
    path: options.path,
    onError,
    backgroundCheckpoint: options.backgroundCheckpoint ?? false,
  });
  return createStore(db, 'sqlite', close, { syncWal, run, groupSync }, listeners);
}

export function createStore(
  db: Kysely<Database>,
  dialect: SqlDialect,
  close: () => Promise<void>,
  sqlite?: { syncWal(): Promise<void>; run?: DirectRun; groupSync: GroupSync },
  errorListeners: Set<(error: unknown) => void> = new Set(),
): Store {
  // SQLite: one writer, one disk flush per COMMIT; transactions asked for together commit together.
  const group = sqlite ? createGroupCommit(db, sqlite.syncWal, sqlite.groupSync, sqlite.run) : null;
  const shared = dialect === 'postgres' ? createSharedTransactions(db) : null;
  const transaction = <T>(work: (trx: Kysely<Database>) => Promise<T>): Promise<T> =>
    group ? group.transaction(work) : db.transaction().execute(work);
  const drains = new Set<() => Promise<void>>();
  return {
    dialect,
    db,
    transaction,
    sharedTransaction(work) {
      if (shared) return shared.transaction(work);
      return group ? group.transaction(work, { rerunnable: true }) : transaction(work);
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
    async close() {
      await shared?.drain();
      for (const drain of drains) await drain();
      await group?.drain();
      await close();
    },
    drainOnClose(drain) {
      drains.add(drain);
    },
    onError(listener) {
      errorListeners.add(listener);
      return () => errorListeners.delete(listener);
    },
  };
}
