import { CompiledQuery, type Kysely, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sharedStatement } from '../../src/store/engine/shared-statements.js';
import type { Database } from '../../src/store/schema.js';
import { openStore, type Store } from '../../src/store/store.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

/**
 * Group commit with statements shared by the group, on PostgreSQL (store/engine/shared-transactions.ts,
 * shared-statements.ts): units asked for together run in one transaction, each shared statement sent
 * once for all of them; one unit never fails another; calls whose keys meet run one after another.
 * On a scratch table of the test's own, so what is counted is the engine's statements alone.
 */
let database: TestDatabase;
let store: Store;
let statements: string[];

beforeEach(async () => {
  database = await createTestDatabase();
  statements = [];
  store = await openStore({
    kind: 'postgres',
    url: database.url,
    onQuery: (text) => statements.push(text.trim().split(/\s+/)[0]?.toLowerCase() ?? ''),
  });
  await sql`create table scratch (k text primary key, v integer not null check (v < 100))`.execute(store.db);
  statements.length = 0;
});

afterEach(async () => {
  await store.close();
  await database.drop();
});

/** Inserts each call's row unless its key is taken; answers whether it did. */
const insertScratch = sharedStatement(
  async (db: Kysely<Database>, rows: readonly { k: string; v: number }[]) => {
    const result = await db.executeQuery<{ k: string }>(
      CompiledQuery.raw(
        `insert into scratch (k, v) select k, v from json_to_recordset($1::json) as r(k text, v integer)
         on conflict (k) do nothing returning k`,
        [JSON.stringify(rows)],
      ),
    );
    const inserted = new Set(result.rows.map((row) => row.k));
    return rows.map((row) => inserted.has(row.k));
  },
  { keys: (row) => [row.k] },
);

async function keys(): Promise<string[]> {
  const { rows } = await sql<{ k: string }>`select k from scratch order by k`.execute(store.db);
  return rows.map((row) => row.k);
}

const count = (word: string) => statements.filter((s) => s === word).length;

describe('shared transactions on PostgreSQL', () => {
  it('runs units asked for together in one transaction, each shared statement once for all', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        store.sharedTransaction(async (trx) => {
          const first = await insertScratch(trx, { k: `a${i}`, v: i });
          const second = await insertScratch(trx, { k: `b${i}`, v: i });
          return [first, second];
        }),
      ),
    );
    expect(results).toEqual(Array.from({ length: 8 }, () => [true, true]));
    expect({ begin: count('begin'), insert: count('insert'), commit: count('commit') }).toEqual({
      begin: 1,
      insert: 2,
      commit: 1,
    });
    expect(await keys()).toHaveLength(16);
  });

  it('rolls back a unit that throws alone: the others run again alone and commit', async () => {
    const runs = new Map<number, number>();
    const settled = await Promise.allSettled(
      Array.from({ length: 4 }, (_, i) =>
        store.sharedTransaction(async (trx) => {
          runs.set(i, (runs.get(i) ?? 0) + 1);
          await insertScratch(trx, { k: `k${i}`, v: i });
          if (i === 2) throw new Error('unit 2 failed after writing');
          return i;
        }),
      ),
    );
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((settled[2] as PromiseRejectedResult).reason.message).toBe('unit 2 failed after writing');
    expect(await keys()).toEqual(['k0', 'k1', 'k3']);
    // Once in the group, once alone.
    expect([...runs.values()]).toEqual([2, 2, 2, 2]);
  });

  it('fails only the unit whose row a shared statement refused', async () => {
    const settled = await Promise.allSettled(
      [1, 2, 500, 3].map((v) => store.sharedTransaction((trx) => insertScratch(trx, { k: `v${v}`, v }))),
    );
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(String((settled[2] as PromiseRejectedResult).reason.message)).toMatch(/check constraint/);
    expect(await keys()).toEqual(['v1', 'v2', 'v3']);
  });

  it('sends calls whose keys meet one after another, in the order they were made', async () => {
    const results = await Promise.all(
      ['x', 'y', 'x', 'x'].map((k, i) => store.sharedTransaction((trx) => insertScratch(trx, { k, v: i }))),
    );
    // The first call of a key inserts it; the later ones find it taken, as if each ran after it.
    expect(results).toEqual([true, true, false, false]);
    expect(count('insert')).toBe(3);
    const { rows } = await sql<{ k: string; v: number }>`select k, v from scratch order by k`.execute(
      store.db,
    );
    expect(rows).toEqual([
      { k: 'x', v: 0 },
      { k: 'y', v: 1 },
    ]);
  });

  it('runs a unit alone as an ordinary transaction, its shared statement for its one row', async () => {
    const inTransaction = await store.sharedTransaction(async (trx) => {
      await insertScratch(trx, { k: 'alone', v: 1 });
      const { rows } = await sql<{ xid: string | null }>`select txid_current_if_assigned() as xid`.execute(
        trx,
      );
      return rows[0]?.xid !== null;
    });
    expect(inTransaction).toBe(true);
    // Kysely's own BEGIN and COMMIT are not logged; a group's would be.
    expect({ begin: count('begin'), insert: count('insert'), commit: count('commit') }).toEqual({
      begin: 0,
      insert: 1,
      commit: 0,
    });
  });

  it("refuses a shared statement called on a unit's handle after its group ended", async () => {
    const handles: Kysely<Database>[] = [];
    await Promise.all(
      [1, 2].map((v) =>
        store.sharedTransaction(async (trx) => {
          handles.push(trx);
          return insertScratch(trx, { k: `h${v}`, v });
        }),
      ),
    );
    await expect(insertScratch(handles[0] as Kysely<Database>, { k: 'late', v: 3 })).rejects.toThrow(
      'a shared statement was called after its group transaction ended',
    );
    expect(await keys()).toEqual(['h1', 'h2']);
  });

  it('answers every unit asked for before close', async () => {
    const pending = Array.from({ length: 5 }, (_, i) =>
      store.sharedTransaction((trx) => insertScratch(trx, { k: `c${i}`, v: i })),
    );
    const closing = store.close();
    expect(await Promise.all(pending)).toEqual([true, true, true, true, true]);
    await closing;
    store = await openStore({ kind: 'postgres', url: database.url });
    expect(await keys()).toEqual(['c0', 'c1', 'c2', 'c3', 'c4']);
  });
});
