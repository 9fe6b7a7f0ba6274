import { existsSync, renameSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Config } from '../config.js';
import { CliError } from './cli-error.js';

export interface BackupResult {
  /** The backup file written. */
  file: string;
  /** Its size in database pages. */
  pages: number;
}

/** SQLite's page count fits in 31 bits; asking for this many copies the rest in one step. */
const ALL_PAGES = 0x7fffffff;

/**
 * `zekt backup <file>`: a consistent copy of the embedded store, taken while `zekt serve` runs,
 * through SQLite's online backup API (better-sqlite3's `backup()`).
 *
 * The pages are copied in one step inside one read transaction: in WAL mode the server keeps
 * writing meanwhile, and the copy is the store as of that transaction's start. (Copied a hundred
 * pages at a time, as by default, a write between two steps would restart the copy, and a busy
 * server could keep it from ever finishing.) The copy is written beside its destination and
 * renamed into place when complete, so a file at `<file>` is always a whole database. Restoring is
 * copying it to `<ZEKT_DATA_DIR>/zekt.db` while the server is stopped (docs/deploy.md).
 */
export async function backupStore(database: Config['database'], target: string): Promise<BackupResult> {
  if (database.kind === 'postgres')
    throw new CliError(
      'zekt backup copies the embedded SQLite store; with DATABASE_URL set the store is PostgreSQL: back it up with pg_dump (pg_dump --format=custom --file zekt.dump "$DATABASE_URL"; docs/deploy.md, Backups)',
    );
  if (!existsSync(database.path))
    throw new CliError(
      `zekt backup: there is no store at ${database.path}: set ZEKT_DATA_DIR to the directory zekt serve uses (it holds zekt.db)`,
    );
  const file = resolve(target);
  if (file === resolve(database.path))
    throw new CliError('zekt backup: the backup must go to another file than the store itself');
  if (existsSync(file))
    throw new CliError(
      `zekt backup: ${file} exists already; choose a new file name (nothing is overwritten)`,
    );
  if (!existsSync(dirname(file)))
    throw new CliError(`zekt backup: the directory ${dirname(file)} does not exist`);

  const partial = `${file}.partial`;
  rmSync(partial, { force: true });
  // Read-write but never written: a read-only connection cannot open a WAL store whose -shm file
  // it may not create, and `fileMustExist` keeps a wrong path from creating an empty store.
  const source = new BetterSqlite3(database.path, { fileMustExist: true });
  try {
    source.pragma('busy_timeout = 5000');
    const progress = await source.backup(partial, { progress: () => ALL_PAGES });
    renameSync(partial, file);
    return { file, pages: progress.totalPages };
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  } finally {
    source.close();
  }
}
