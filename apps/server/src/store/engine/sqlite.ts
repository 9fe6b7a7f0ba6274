import { mkdirSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from '../schema.js';
import { classifyDriverError } from '../store-errors.js';
import { classifyingDialect } from './classified-dialect.js';
import type { DirectRun } from './direct-run.js';
import { BACKSTOP_PAGES, startWalCheckpointer, type WalCheckpointer } from './wal-checkpointer.js';

export interface SqliteOptions {
  /** File path; created with its directory when missing. */
  path: string;
  /** Told about every error a statement raised (already classified). */
  onError?: (error: unknown) => void;
  /**
   * Checkpoint the WAL on a thread of its own (wal-checkpointer.ts) instead of inside a COMMIT on
   * the event loop: for the long-running server, not for a CLI command's few statements.
   */
  backgroundCheckpoint?: boolean;
}

/**
 * The embedded store. WAL lets readers proceed during a write; `synchronous = FULL` makes every
 * committed transaction survive a crash or power loss, which is what "acknowledged" means for a
 * webhook Zekt has answered. https://www.sqlite.org/pragma.html#pragma_synchronous
 */
export function openSqlite(options: SqliteOptions): {
  db: Kysely<Database>;
  /** Flushes the write-ahead log to disk (off the event loop): what `synchronous = FULL` does at COMMIT. */
  syncWal(): Promise<void>;
  /** Runs a compiled statement at once, past Kysely's executor (see `DirectRun`). */
  run: DirectRun;
  /** The group commit's durability (`GroupSync`). */
  groupSync: GroupSync;
  close(): Promise<void>;
} {
  mkdirSync(dirname(options.path), { recursive: true });
  const native = new BetterSqlite3(options.path);
  native.pragma('journal_mode = WAL');
  native.pragma('synchronous = FULL');
  native.pragma('foreign_keys = ON');
  // Another process (the CLI creating a token while the server runs) may hold the write lock briefly.
  native.pragma('busy_timeout = 5000');
  // Statement journals in memory. A savepoint keeps the pages it changes as they were, to roll
  // back to them (the group commit's units that may not run twice each run in one:
  // group-commit.ts), and past 64 KiB a transaction's statement journal went to a temporary file,
  // one `pwrite` per page and one per page number. Under `zekt bench`, while every unit still ran
  // in a savepoint, that was more than four pages journaled for each page the WAL got, and three
  // tenths of the durable path's SQL time (docs/performance.md). What it holds is bounded by the
  // pages one transaction changes: a group of units, a retention batch; the migrations run without
  // a transaction on SQLite. (It also keeps TEMP tables in memory; the store has none.)
  native.pragma('temp_store = memory');
  let checkpointer: WalCheckpointer | null = null;
  if (options.backgroundCheckpoint) {
    native.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    checkpointer = startWalCheckpointer({ path: options.path, onError: options.onError });
  }
  const prepare = statementCache(native);
  const sync = groupSyncOf(native);
  const db = new Kysely<Database>({
    dialect: classifyingDialect(
      new SqliteDialect({ database: adaptForKysely(native, prepare, sync.beforeUngrouped) }),
      options.onError,
    ),
  });
  let wal: Promise<FileHandle> | null = null;
  return {
    db,
    run: directRunner(prepare, options.onError),
    groupSync: sync.groupSync,
    async syncWal() {
      // The -wal file exists from the first commit on and lives as long as this connection.
      wal ??= open(`${options.path}-wal`, 'r+');
      await (await wal).sync();
    },
    close: async () => {
      // First, so that the server's connection is the last one and checkpoints what is left.
      await checkpointer?.close();
      await db.destroy();
      await (await wal)?.close().catch(() => undefined);
    },
  };
}

type Statement = ReturnType<BetterSqlite3.Database['prepare']>;

/**
 * A group commit's COMMIT does not flush the WAL (`synchronous = NORMAL`): the group flushes it
 * off the event loop before it answers (group-commit.ts). Every other statement runs with
 * `synchronous = FULL`, so a write outside a group is on disk when it returns.
 *
 * The setting changes only when it must: a group relaxes it if it is not relaxed already, and
 * the first statement outside a group restores it. Setting it around every group cost two
 * statements per group (a fifth of a group's own statements on a webhook's path, 27 µs per
 * group in `zekt bench`), and under load groups follow one another with nothing in between.
 */
export interface GroupSync {
  /** A group holds the connection from now on: its COMMIT is flushed by the group. */
  enter(): void;
  /** The group is over (committed or rolled back). */
  leave(): void;
}

function groupSyncOf(native: BetterSqlite3.Database): {
  groupSync: GroupSync;
  /** Called before each statement Kysely runs: outside a group, make sure it is FULL. */
  beforeUngrouped(): void;
} {
  let relaxed = false;
  let grouped = false;
  return {
    groupSync: {
      enter() {
        // Not allowed inside a transaction: the group has not begun its own yet.
        if (!relaxed) native.pragma('synchronous = normal');
        relaxed = true;
        grouped = true;
      },
      leave() {
        grouped = false;
      },
    },
    beforeUngrouped() {
      if (grouped || !relaxed) return;
      // Outside any transaction: a group's has ended, and nothing else begins one while relaxed.
      native.pragma('synchronous = full');
      relaxed = false;
    },
  };
}

/** Distinct SQL texts kept prepared; the store's queries have far fewer shapes than this. */
const STATEMENT_CACHE_SIZE = 500;

/** SQLite has no boolean type and better-sqlite3 refuses to bind `true`/`false`: they are bound as 1/0. */
const toParams = (params: unknown): unknown =>
  Array.isArray(params) ? params.map((p) => (typeof p === 'boolean' ? Number(p) : p)) : params;

/**
 * Prepared statements kept by SQL text. Kysely prepares every query anew, and preparing costs more
 * than running most of ours (it was the largest item after COMMIT in `zekt bench`'s profile). A
 * statement still iterating (a streamed query) is never handed out twice.
 */
function statementCache(native: BetterSqlite3.Database): (source: string) => Statement {
  const prepared = new Map<string, Statement>();
  return (source) => {
    const cached = prepared.get(source);
    if (cached && !cached.busy) {
      // Most recently used last, so a burst of one-off texts evicts those, not the hot ones.
      prepared.delete(source);
      prepared.set(source, cached);
      return cached;
    }
    const statement = native.prepare(source);
    if (!cached) {
      if (prepared.size >= STATEMENT_CACHE_SIZE) {
        const oldest = prepared.keys().next();
        if (!oldest.done) prepared.delete(oldest.value);
      }
      prepared.set(source, statement);
    }
    return statement;
  };
}

/**
 * Three adaptations between Kysely and better-sqlite3, applied where Kysely prepares a statement:
 * flags are bound as 1/0 (`toParams`), prepared statements are reused (`statementCache`), and
 * each statement runs with the durability its place asks for (`beforeRun`: `GroupSync`; Kysely
 * prepares every statement right before it runs it).
 */
function adaptForKysely(
  native: BetterSqlite3.Database,
  prepare: (source: string) => Statement,
  beforeRun: () => void,
): BetterSqlite3.Database {
  const wrapped = new WeakMap<Statement, Statement>();
  const wrap = (statement: Statement): Statement =>
    new Proxy(statement, {
      // Accessors run on the statement itself: better-sqlite3's native getters (`busy`) crash the
      // process when called with the proxy as `this`.
      get(stmt, name) {
        const value = Reflect.get(stmt, name);
        if (name === 'all' || name === 'run' || name === 'iterate' || name === 'get') {
          return (params: unknown) => (value as (p: unknown) => unknown).call(stmt, toParams(params));
        }
        return typeof value === 'function' ? value.bind(stmt) : value;
      },
    });
  return new Proxy(native, {
    get(target, property, receiver) {
      if (property !== 'prepare') return Reflect.get(target, property, receiver);
      return (source: string) => {
        // Before preparing: a pragma's value is read when its statement is prepared.
        beforeRun();
        const statement = prepare(source);
        let proxy = wrapped.get(statement);
        if (!proxy) {
          proxy = wrap(statement);
          wrapped.set(statement, proxy);
        }
        return proxy;
      };
    },
  });
}

/**
 * Runs one compiled statement on the native connection, synchronously, with Kysely's result
 * shape and the driver's error classification. Only for the group commit's connection while it
 * holds it (group-commit.ts): nothing else can have a statement under way on it then.
 */
function directRunner(
  prepare: (source: string) => Statement,
  onError: ((error: unknown) => void) | undefined,
): DirectRun {
  return (source, parameters) => {
    try {
      const statement = prepare(source);
      const params = toParams(parameters) as unknown[];
      if (statement.reader) return { rows: statement.all(params) };
      const { changes, lastInsertRowid } = statement.run(params);
      return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
    } catch (error) {
      const classified = classifyDriverError(error);
      onError?.(classified);
      throw classified;
    }
  };
}
