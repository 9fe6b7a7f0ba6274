import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../../src/store/store.js';
import {
  copyMigratedSqlite,
  createMigratedTestDatabase,
  createTestDatabase,
  TEST_STORE,
} from './test-database.js';

/**
 * A migrated store of the kind under test (TEST_STORE): a SQLite file in a fresh temporary
 * directory or a fresh PostgreSQL database, either copied from a migrated template unless
 * `fromScratch` (the tests of the migrations themselves) asks for every migration to run on an
 * empty one, or `unmigrated` for no migration at all (a test that migrates step by step).
 * `dispose` closes and deletes it.
 */
export async function openTempStore(
  options: { fromScratch?: boolean; unmigrated?: boolean } = {},
): Promise<{ store: Store; path: string; dispose(): Promise<void> }> {
  const empty = options.fromScratch || options.unmigrated;
  if (TEST_STORE === 'postgres') {
    const database = empty ? await createTestDatabase() : await createMigratedTestDatabase();
    const store = await openStore({ kind: 'postgres', url: database.url, poolSize: 4 });
    if (!options.unmigrated) await store.migrate();
    return {
      store,
      path: database.url,
      async dispose() {
        await store.close();
        await database.drop();
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'zekt-store-'));
  const path = join(dir, 'zekt.db');
  if (!empty) await copyMigratedSqlite(path);
  const store = await openStore({ kind: 'sqlite', path });
  if (!options.unmigrated) await store.migrate();
  return {
    store,
    path,
    async dispose() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
