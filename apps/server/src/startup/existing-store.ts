import { existsSync } from 'node:fs';
import type { Config } from '../config.js';
import { pendingMigrations } from '../store/migration-status.js';
import { openStore, type Store } from '../store/store.js';
import { OperatorError } from './operator-error.js';

/**
 * Opens the store an operator command works on, never creating one: a command run in the wrong
 * directory, or without `DATABASE_URL`, must not write to a new empty store that nothing reads.
 * With `migrated`, a store missing migrations of this version is refused too.
 */
export async function openExistingStore(
  database: Config['database'],
  options: { migrated?: boolean } = {},
): Promise<Store> {
  if (database.kind === 'sqlite' && !existsSync(database.path)) {
    throw new OperatorError(
      `there is no Zekt store at ${database.path}: DATABASE_URL is not set, so the embedded store of ZEKT_DATA_DIR is used`,
      'set DATABASE_URL to the PostgreSQL database zekt serve uses, or ZEKT_DATA_DIR to the directory holding its zekt.db (by default .zekt in the directory zekt serve runs in)',
    );
  }
  const store = await openStore(database);
  if (options.migrated) {
    try {
      const pending = await pendingMigrations(store);
      if (pending.length > 0) {
        throw new OperatorError(
          `the store is not migrated to this version of zekt (${pending.length} migration${pending.length === 1 ? '' : 's'} to apply: ${pending.join(', ')})`,
          'run zekt migrate (zekt serve migrates when it starts)',
        );
      }
    } catch (error) {
      await store.close().catch(() => undefined);
      throw error;
    }
  }
  return store;
}
