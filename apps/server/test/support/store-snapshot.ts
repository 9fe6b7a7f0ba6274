import type { Store } from '../../src/store/store.js';

/**
 * Every row of every table of the store, table by table: "did this request write anything?" is
 * then `changedTables(before, after)`. Tables named in `except` hold bookkeeping a refused request
 * writes by design (rate-limit counters count refusals).
 */
export type StoreSnapshot = Map<string, string>;

export async function snapshotStore(store: Store, except: string[] = []): Promise<StoreSnapshot> {
  const tables = (await store.db.introspection.getTables())
    .map((table) => table.name)
    .filter((name) => !name.startsWith('kysely_') && !except.includes(name))
    .sort();
  const snapshot: StoreSnapshot = new Map();
  for (const table of tables) {
    // biome-ignore lint/suspicious/noExplicitAny: every table, whatever its columns.
    const rows = await (store.db as any).selectFrom(table).selectAll().execute();
    snapshot.set(
      table,
      rows
        .map((row: unknown) => JSON.stringify(row))
        .sort()
        .join('\n'),
    );
  }
  return snapshot;
}

/** The tables whose rows differ between two snapshots. */
export function changedTables(before: StoreSnapshot, after: StoreSnapshot): string[] {
  const tables = new Set([...before.keys(), ...after.keys()]);
  return [...tables].filter((table) => before.get(table) !== after.get(table)).sort();
}
