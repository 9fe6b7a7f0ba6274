import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { type CompiledQuery, Kysely, SqliteDialect, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { consumerFailures, failedAttempts } from './connection-stats.js';
import { notStartedOfConnection } from './not-started.js';
import type { Database } from './schema.js';
import { openStore } from './store.js';
import { recordWebhookDelivery } from './webhook-deliveries.js';

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

  it("reads diagnostics' 30 days through indexes that hold only failures, never every delivery", async () => {
    // Diagnostics with years of history (issue 11): failed attempts start from the attempts of the
    // connection in the window (not from every delivery it ever had); never-started deliveries and
    // the consumer's failures come from partial indexes, not from every delivery of the window.
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
    } finally {
      await db.destroy();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
