import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { type CompiledQuery, Kysely, SqliteDialect, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { consumerFailures, failedAttempts } from './connection-stats.js';
import { claimWithContext, insertDeliveries, newDeliveryRow } from './deliveries/index.js';
import { notStartedOfConnection } from './not-started.js';
import type { Database } from './schema.js';
import { openStore, type Store } from './store.js';
import { recordWebhookDelivery } from './webhook-deliveries.js';

/**
 * A migrated store, and a second Kysely on the same file that records every statement it runs,
 * with the query plan SQLite would use for each: for tests that hold a statement to its indexes.
 */
async function withPlannedStatements(
  test: (context: {
    store: Store;
    db: Kysely<Database>;
    captured: CompiledQuery[];
    planOf: (query: CompiledQuery) => string;
  }) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'zekt-sqlite-'));
  const path = join(dir, 'zekt.db');
  const store = await openStore({ kind: 'sqlite', path });
  const native = new BetterSqlite3(path);
  const captured: CompiledQuery[] = [];
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: native }),
    log: (event) => {
      if (event.level === 'query') captured.push(event.query);
    },
  });
  const planOf = (query: CompiledQuery) =>
    (
      native.prepare(`explain query plan ${query.sql}`).all(...query.parameters) as Array<{
        detail: string;
      }>
    )
      .map((row) => row.detail)
      .join('\n');
  try {
    await store.migrate();
    await test({ store, db, captured, planOf });
  } finally {
    await db.destroy();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('sqlite store', () => {
  it('runs in WAL mode with synchronous=FULL, and commits are visible to another connection', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zekt-sqlite-'));
    const path = join(dir, 'zekt.db');
    const store = await openStore({ kind: 'sqlite', path });
    try {
      await store.migrate();
      const journal = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(store.db);
      expect(journal.rows[0]?.journal_mode).toBe('wal');
      const synchronous = await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db);
      expect(synchronous.rows[0]?.synchronous).toBe(2);
      await recordWebhookDelivery(store.db, { guid: 'kept', event: 'x', hookId: null }, 1);
      const other = await openStore({ kind: 'sqlite', path });
      expect(await recordWebhookDelivery(other.db, { guid: 'kept', event: 'x', hookId: null }, 2)).toBe(
        false,
      );
      await other.close();
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('journals what a savepoint changes in memory, never in a temporary file', async () => {
    // Each unit of a group commit runs in a savepoint (engine/group-commit.ts); past 64 KiB,
    // SQLite's default keeps that journal in a temporary file it writes page by page.
    const dir = mkdtempSync(join(tmpdir(), 'zekt-sqlite-'));
    const store = await openStore({ kind: 'sqlite', path: join(dir, 'zekt.db') });
    const openTemporaryFiles = () =>
      readdirSync('/proc/self/fd')
        .map((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`);
          } catch {
            return ''; // closed since it was listed
          }
        })
        .filter((target) => target.includes('etilqs_'));
    try {
      await sql`create table scratch (id integer primary key, body text)`.execute(store.db);
      await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 2000)
        insert into scratch select i, printf('%.200c', 'a') from n`.execute(store.db);
      await sql`begin immediate`.execute(store.db);
      await sql`update scratch set body = body || 'x'`.execute(store.db);
      await sql`savepoint unit`.execute(store.db);
      // About 500 KB of pages changed again inside the savepoint: each is journaled first.
      await sql`update scratch set body = body || 'y'`.execute(store.db);
      expect(openTemporaryFiles()).toEqual([]);
      await sql`rollback`.execute(store.db);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads diagnostics' 30 days through indexes that hold only failures, never every delivery", async () => {
    // Diagnostics with years of history: failed attempts start from the attempts of the
    // connection in the window (not from every delivery it ever had); never-started deliveries and
    // the consumer's failures come from partial indexes, not from every delivery of the window.
    await withPlannedStatements(async ({ db, captured, planOf }) => {
      const cases: Array<[() => Promise<unknown>, number, RegExp]> = [
        [
          () => failedAttempts(db, 'sub_1', 1_000, 10),
          2,
          /^SEARCH a USING INDEX delivery_attempts_subscription /m,
        ],
        [
          () => notStartedOfConnection(db, 'sub_1', 1_000, 10),
          2,
          /^SEARCH deliveries USING INDEX deliveries_not_started /m,
        ],
        [
          () => consumerFailures(db, 'sub_1', 1_000),
          1,
          /^SEARCH deliveries USING (COVERING )?INDEX deliveries_consumer_failure /m,
        ],
      ];
      for (const [run, statements, index] of cases) {
        captured.length = 0;
        await run();
        expect(captured).toHaveLength(statements);
        for (const query of captured) {
          const plan = planOf(query);
          expect(plan, query.sql).toMatch(index);
          expect(plan, query.sql).not.toMatch(/^SCAN /m);
        }
      }
      // The attempts' statements touch no delivery at all.
      captured.length = 0;
      await failedAttempts(db, 'sub_1', 1_000, 10);
      for (const query of captured) expect(planOf(query), query.sql).not.toMatch(/deliveries/);
    });
  });

  it('claims through one range of deliveries_due and the primary key, with no sort and no scan', async () => {
    // The claim runs up to a few times per delivery under load: the window function and
    // sorts PostgreSQL's single statement needs cost SQLite 180–400 µs per claim.
    await withPlannedStatements(async ({ store, db, captured, planOf }) => {
      await insertDeliveries(
        store.db,
        [1, 2, 3].map((i) =>
          newDeliveryRow(
            {
              deliveryId: `d-${i}`,
              eventId: `e-${i}`,
              subscriptionId: 'sub_1',
              serviceId: 'svc_1',
              providerAccountId: 1,
              providerRepositoryId: 10,
              consumerAccountId: i === 3 ? 3 : 2,
              consumerRepositoryId: 20,
              correlationId: `c-${i}`,
              runAttempt: 1,
              eventType: 'built',
              durable: true,
            },
            i,
          ),
        ),
      );
      captured.length = 0;
      const claimed = await db.transaction().execute((trx) =>
        claimWithContext(trx, 'sqlite', {
          owner: 'w',
          now: 10,
          leaseMs: 1_000,
          limit: 8,
          perInstallation: 2,
          inFlight: new Map([[2, 1]]),
          skipAccounts: [4],
        }),
      );
      // Installation 2 has one free slot: its oldest delivery; installation 3's one.
      expect(claimed.claimed.map((c) => [c.row.delivery_id, c.row.attempt_count])).toEqual([
        ['d-1', 1],
        ['d-3', 1],
      ]);
      // It read every due delivery: what is left waits for a slot of installation 2 (or skipped 4).
      expect(claimed.sawAll).toBe(true);
      expect([...claimed.atCap].sort()).toEqual([2, 4]);
      const plans = captured
        .filter((query) => !/^(begin|commit)/.test(query.sql))
        .map((query) => [query.sql, planOf(query)] as const);
      expect(plans.map(([statement]) => statement.split(' ')[0])).toEqual(['select', 'update', 'select']);
      const [due, lease, context] = plans.map(([, plan]) => plan) as [string, string, string];
      expect(due).toMatch(/^SEARCH deliveries USING INDEX deliveries_due /m);
      expect(lease).toMatch(/^SEARCH deliveries USING (COVERING )?INDEX sqlite_autoindex_deliveries_1 /m);
      expect(context).toMatch(/^SEARCH d USING INDEX sqlite_autoindex_deliveries_1 /m);
      // Lists are bound as one JSON parameter each: the only scan is of that list (json_each), never of a table.
      expect(due).toMatch(/^SCAN json_each VIRTUAL TABLE/m);
      expect(lease).toMatch(/^SCAN json_each VIRTUAL TABLE/m);
      for (const [statement, plan] of plans) {
        expect(plan, statement).not.toMatch(/TEMP B-TREE/);
        expect(plan, statement).not.toMatch(/^SCAN (?!json_each VIRTUAL TABLE)/m);
      }
    });
  });
});
