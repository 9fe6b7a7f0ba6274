import { Migrator } from 'kysely';
import { afterEach } from 'vitest';
import { createMigrationProvider } from '../../src/store/migrations/index.js';
import type { Store } from '../../src/store/store.js';
import { openTempStore } from './temp-store.js';

/** A Migrator over `store` that runs Zekt's migrations one step at a time (`migrateTo`). */
export function stepMigrator(store: Store): Migrator {
  return new Migrator({ db: store.db, provider: createMigrationProvider({ dialect: store.dialect }) });
}

/**
 * For the test of one migration: opens a store of the kind under test with no migration run, and
 * its step Migrator; every store opened is deleted after each test. Call at the top of a describe.
 */
export function useUnmigratedStores(): () => Promise<{ store: Store; migrator: Migrator }> {
  const disposals: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const dispose of disposals.splice(0)) await dispose();
  });
  return async () => {
    const { store, dispose } = await openTempStore({ unmigrated: true });
    disposals.push(dispose);
    return { store, migrator: stepMigrator(store) };
  };
}
