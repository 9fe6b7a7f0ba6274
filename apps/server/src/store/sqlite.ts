import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from './schema.js';

export interface SqliteOptions {
  /** File path; created with its directory when missing. */
  path: string;
}

/**
 * The embedded store. WAL lets readers proceed during a write; `synchronous = FULL` makes every
 * committed transaction survive a crash or power loss, which is what "acknowledged" means for a
 * webhook Zekt has answered. https://www.sqlite.org/pragma.html#pragma_synchronous
 */
export function openSqlite(options: SqliteOptions): { db: Kysely<Database>; close(): Promise<void> } {
  mkdirSync(dirname(options.path), { recursive: true });
  const native = new BetterSqlite3(options.path);
  native.pragma('journal_mode = WAL');
  native.pragma('synchronous = FULL');
  native.pragma('foreign_keys = ON');
  // Another process (the CLI creating a token while the server runs) may hold the write lock briefly.
  native.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: bindBooleansAsIntegers(native) }),
  });
  return {
    db,
    close: async () => {
      await db.destroy();
    },
  };
}

type Statement = ReturnType<BetterSqlite3.Database['prepare']>;

/**
 * SQLite has no boolean type and better-sqlite3 refuses to bind `true`/`false`; the schema declares
 * flags as booleans (PostgreSQL stores them natively), so they are bound as 1/0 here, once.
 */
function bindBooleansAsIntegers(native: BetterSqlite3.Database): BetterSqlite3.Database {
  const toParams = (params: unknown): unknown =>
    Array.isArray(params) ? params.map((p) => (typeof p === 'boolean' ? Number(p) : p)) : params;
  return new Proxy(native, {
    get(target, property, receiver) {
      if (property !== 'prepare') return Reflect.get(target, property, receiver);
      return (source: string) => {
        const statement: Statement = target.prepare(source);
        return new Proxy(statement, {
          get(stmt, name, stmtReceiver) {
            const value = Reflect.get(stmt, name, stmtReceiver);
            if (name === 'all' || name === 'run' || name === 'iterate' || name === 'get') {
              return (params: unknown) => (value as (p: unknown) => unknown).call(stmt, toParams(params));
            }
            return typeof value === 'function' ? value.bind(stmt) : value;
          },
        });
      };
    },
  });
}
