import { Migrator } from 'kysely';
import { createMigrationProvider } from './migrations/index.js';
import type { Store } from './store.js';

/**
 * The migrations this version of Zekt has that the database has not applied, by name, in order;
 * read without applying any (`zekt doctor`, `zekt token create`). A database without Zekt's tables
 * has all of them pending.
 */
export async function pendingMigrations(store: Pick<Store, 'db' | 'dialect'>): Promise<string[]> {
  const migrator = new Migrator({
    db: store.db,
    provider: createMigrationProvider({ dialect: store.dialect }),
  });
  const migrations = await migrator.getMigrations();
  return migrations.filter((m) => m.executedAt === undefined).map((m) => m.name);
}
