import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../store.js';
import { recordWebhookDelivery } from '../webhook-deliveries.js';
import { directRunOf } from './direct-run.js';

/**
 * Group commit on the embedded store: transactions asked for together share one COMMIT, yet each
 * stays atomic and each caller hears only about its own.
 */
describe('group commit (SQLite)', () => {
  let dir: string;
  let store: Store;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'zekt-group-'));
    store = await openStore({ kind: 'sqlite', path: join(dir, 'zekt.db') });
    await store.migrate();
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const record = (guid: string) => (trx: Store['db']) =>
    recordWebhookDelivery(trx, { guid, event: 'x', hookId: null }, 1);
  const storedGuids = async () =>
    (await store.db.selectFrom('webhook_receipts').select('delivery_guid').execute())
      .map((row) => row.delivery_guid)
      .sort();

  /** Wraps a unit so that `runs` records each time the group runs it, in order. */
  const countedIn =
    (runs: string[]) =>
    (name: string, work: (trx: Store['db']) => Promise<boolean>) =>
    (trx: Store['db']) => {
      runs.push(name);
      return work(trx);
    };

  it('rolls back only the transaction that failed; the others of its group commit', async () => {
    const results = await Promise.allSettled([
      store.transaction(record('a')),
      store.transaction(async (trx) => {
        await record('b')(trx);
        throw new Error('boom');
      }),
      store.transaction(record('c')),
      // Sees the first one's row as committed: it was a duplicate.
      store.transaction(record('a')),
    ]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([
      true,
      'boom',
      true,
      false,
    ]);
    expect(await storedGuids()).toEqual(['a', 'c']);
  });

  it('runs shared units without savepoints, and runs the group again without the one that failed', async () => {
    const runs: string[] = [];
    const counted = countedIn(runs);
    const results = await Promise.allSettled([
      store.sharedTransaction(counted('a', record('a'))),
      // A unit of the generic kind, in a savepoint: it runs after the shared ones, once.
      store.transaction(counted('c', record('c'))),
      store.sharedTransaction(
        counted('b', async (trx) => {
          await record('b')(trx);
          throw new Error('boom');
        }),
      ),
      store.sharedTransaction(counted('a again', record('a'))),
    ]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([
      true,
      true,
      'boom',
      // Still the first one's duplicate, after the group ran again.
      false,
    ]);
    // 'a' wrote without a savepoint before 'b' failed: the group rolled back, and every unit but
    // 'b' ran again in the order asked for, each in a savepoint now.
    expect(runs).toEqual(['a', 'b', 'a', 'c', 'a again']);
    expect(await storedGuids()).toEqual(['a', 'c']);
  });

  it('runs shared units before the others of their group, and each of them once when none fails', async () => {
    const runs: string[] = [];
    const counted = countedIn(runs);
    const results = await Promise.all([
      store.transaction(counted('x', record('x'))),
      store.sharedTransaction(counted('y', record('y'))),
      store.sharedTransaction(counted('z', record('z'))),
    ]);
    expect(results).toEqual([true, true, true]);
    expect(runs).toEqual(['y', 'z', 'x']);
  });

  it('answers every caller only after its COMMIT, and keeps FULL sync outside groups', async () => {
    const many = await Promise.all(Array.from({ length: 50 }, (_, i) => store.transaction(record(`g${i}`))));
    expect(many.every(Boolean)).toBe(true);
    // Another connection sees every row the callers were told about.
    const other = await openStore({ kind: 'sqlite', path: join(dir, 'zekt.db') });
    try {
      const rows = await other.db.selectFrom('webhook_receipts').select('delivery_guid').execute();
      expect(rows).toHaveLength(50);
    } finally {
      await other.close();
    }
    const { rows } = await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db);
    expect(rows[0]?.synchronous).toBe(2);
  });

  it('relaxes synchronous to NORMAL inside a group only, the WAL being flushed by the group', async () => {
    const inside = () =>
      store.transaction(async (trx) => directRunOf(trx)?.('pragma synchronous', []).rows[0]);
    // Groups in a row, then a statement outside, then a group again.
    expect(await inside()).toEqual({ synchronous: 1 });
    expect(await inside()).toEqual({ synchronous: 1 });
    const outside = await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db);
    expect(outside.rows[0]?.synchronous).toBe(2);
    expect(await inside()).toEqual({ synchronous: 1 });
    // A transaction outside the group commit (Kysely's own) runs with FULL too.
    const inKyselyTransaction = await store.db
      .transaction()
      .execute(async (trx) => (await sql<{ synchronous: number }>`pragma synchronous`.execute(trx)).rows[0]);
    expect(inKyselyTransaction).toEqual({ synchronous: 2 });
  });

  it("runs a unit's statements straight on the connection only while its group holds it", async () => {
    // Inside a group the connection is SQLite's only one and its units run one after another
    // (direct-run.ts); anywhere else a statement goes through Kysely's executor and its mutex.
    expect(directRunOf(store.db)).toBeUndefined();
    let held: Store['db'] | undefined;
    const inside = await store.transaction(async (trx) => {
      held = trx;
      const run = directRunOf(trx);
      expect(run).toBeDefined();
      return run?.('select count(*) as n from webhook_receipts', []).rows;
    });
    expect(inside).toEqual([{ n: 0 }]);
    expect(held && directRunOf(held)).toBeUndefined();
    // A statement that fails there is classified like any driver error and rolls its unit back.
    const failed = await store
      .transaction(async (trx) => {
        await record('kept-out')(trx);
        directRunOf(trx)?.('insert into no_such_table values (1)', []);
      })
      .catch((error: unknown) => error as Error);
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).toMatch(/no such table/);
    expect(await store.db.selectFrom('webhook_receipts').select('delivery_guid').execute()).toEqual([]);
  });
});
