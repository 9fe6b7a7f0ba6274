import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, TEST_STORE } from '../../../test/support/test-database.js';
import { stepMigrator } from '../../../test/support/unmigrated-store.js';
import { openStore, type Store } from '../store.js';
import { countUsage, getUsage, USAGE_SHARDS } from '../usage.js';

// Runs on SQLite in the `unit` project and on PostgreSQL in the `postgres` project.
describe(`0009-usage-shards (${TEST_STORE})`, () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function emptyStore(): Promise<Store> {
    if (TEST_STORE === 'postgres') {
      const database = await createTestDatabase();
      const store = await openStore({ kind: 'postgres', url: database.url, poolSize: 8 });
      cleanups.push(
        () => database.drop(),
        () => store.close(),
      );
      return store;
    }
    const dir = mkdtempSync(join(tmpdir(), 'zekt-migration-'));
    const store = await openStore({ kind: 'sqlite', path: join(dir, 'zekt.db') });
    cleanups.push(
      async () => rmSync(dir, { recursive: true, force: true }),
      () => store.close(),
    );
    return store;
  }

  it('keeps the counts of before, lets the previous version count, and sums what concurrent transactions add', async () => {
    const store = await emptyStore();
    const migrator = stepMigrator(store);
    const before = await migrator.migrateTo('0008-attempt-connection');
    expect(before.error).toBeUndefined();
    // A count stored by a server before this migration: one row per account, day and counter.
    await store.db
      .insertInto('usage_daily')
      .values({ account_id: 1, day: '2026-11-02', counter: 'eventsReceived', value: 41 } as never)
      .execute();

    // Later migrations run after it.
    expect((await store.migrate())[0]).toBe('0009-usage-shards');
    const november = Date.UTC(2026, 10, 2, 12);
    expect((await getUsage(store.db, 1, '2026-11', november)).counters.eventsReceived).toBe(41);
    // A process of the previous version, during a rolling upgrade, still counts the old way; the
    // migration only added, so its statement works and its count is read.
    await store.db
      .insertInto('usage_daily')
      .values({ account_id: 1, day: '2026-11-02', counter: 'eventsReceived', value: 1 })
      .onConflict((oc) =>
        oc
          .columns(['account_id', 'day', 'counter'])
          .doUpdateSet((eb) => ({ value: eb('usage_daily.value', '+', 1) })),
      )
      .execute();
    expect((await getUsage(store.db, 1, '2026-11', november)).counters.eventsReceived).toBe(42);

    // 100 events counted by 100 transactions at once (on PostgreSQL, side by side on 8 connections).
    await Promise.all(
      Array.from({ length: 100 }, () =>
        store.transaction((trx) => countUsage(trx, 1, 'eventsReceived', november)),
      ),
    );
    const usage = await getUsage(store.db, 1, '2026-11', november);
    expect(usage.counters.eventsReceived).toBe(142);
    expect(usage.days.find((d) => d.day === '2026-11-02')?.counters.eventsReceived).toBe(142);
    const rows = await store.db
      .selectFrom('usage_daily_shards')
      .select(['shard', 'value'])
      .where('account_id', '=', 1)
      .where('counter', '=', 'eventsReceived')
      .execute();
    // Spread over several rows (all 100 in one of 8 would be 8^-99 likely), never more than the shards.
    expect(rows.length).toBeGreaterThan(1);
    expect(rows.length).toBeLessThanOrEqual(USAGE_SHARDS);
    expect(rows.every((r) => r.shard >= 0 && r.shard < USAGE_SHARDS)).toBe(true);
  });
});
