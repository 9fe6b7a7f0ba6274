import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toHttpError } from '../../src/http/problem.js';
import { openStore, type Store } from '../../src/store/store.js';
import {
  isStoreConflict,
  isStoreUnavailable,
  type StoreErrorCategory,
  storeErrorCategory,
} from '../../src/store/store-errors.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

/**
 * A conflict PostgreSQL breaks between two concurrent transactions (a deadlock, a serialization
 * failure) is classified at the driver (store/store-errors.ts): the loser's caller gets a
 * `StoreConflictError`, counted as `conflict` and answered `503 store_conflict` with `Retry-After`,
 * never a 500; nothing of the loser is kept and the winner commits whole.
 */
let database: TestDatabase;
let store: Store;
let categories: StoreErrorCategory[];

beforeEach(async () => {
  database = await createTestDatabase();
  store = await openStore({ kind: 'postgres', url: database.url, poolSize: 4 });
  categories = [];
  store.onError((error) => categories.push(storeErrorCategory(error)));
  await sql`create table pairs (id integer primary key, owner text)`.execute(store.db);
  await sql`insert into pairs values (1, 'nobody'), (2, 'nobody')`.execute(store.db);
});

afterEach(async () => {
  await store.close();
  await database.drop();
});

/** Resolves once `count` callers have arrived. */
function barrier(count: number): () => Promise<void> {
  let arrived = 0;
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return () => {
    arrived += 1;
    if (arrived === count) open();
    return opened;
  };
}

async function owners(): Promise<string[]> {
  const { rows } = await sql<{ owner: string }>`select owner from pairs order by id`.execute(store.db);
  return rows.map((row) => row.owner);
}

/** PostgreSQL's SQLSTATE, kept as the classified error's cause. */
function driverCode(error: unknown): unknown {
  return (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
}

function expectConflictAnswer(error: unknown): void {
  expect(isStoreConflict(error)).toBe(true);
  expect(isStoreUnavailable(error)).toBe(false);
  const problem = toHttpError(error);
  expect([problem.status, problem.code, problem.headers['retry-after']]).toEqual([
    503,
    'store_conflict',
    '1',
  ]);
  expect(problem.toProblem().detail).toMatch(/send it again/);
}

describe('conflicts PostgreSQL breaks', () => {
  it('a deadlock fails one transaction as a store conflict; the other commits whole', async () => {
    const bothHoldOne = barrier(2);
    // Each takes one row, then wants the other's: PostgreSQL breaks the cycle (40P01).
    const take = (name: string, first: number, second: number) =>
      store.transaction(async (trx) => {
        await sql`update pairs set owner = ${name} where id = ${first}`.execute(trx);
        await bothHoldOne();
        await sql`update pairs set owner = ${name} where id = ${second}`.execute(trx);
        return name;
      });
    const results = await Promise.allSettled([take('a', 1, 2), take('b', 2, 1)]);

    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    const won = results.filter((r): r is PromiseFulfilledResult<string> => r.status === 'fulfilled');
    expect(failed).toHaveLength(1);
    expect(won).toHaveLength(1);
    expectConflictAnswer(failed[0]?.reason);
    expect(driverCode(failed[0]?.reason)).toBe('40P01');
    const winner = won[0]?.value;
    expect(await owners()).toEqual([winner, winner]);
    expect(categories).toContain('conflict');
  });

  it('a serialization failure fails one transaction as a store conflict', async () => {
    const bothRead = barrier(2);
    // Write skew: each reads both rows, then claims the one the other read as free (40001 under
    // SERIALIZABLE, at the write or at COMMIT).
    const claim = (name: string, id: number) =>
      store.db
        .transaction()
        .setIsolationLevel('serializable')
        .execute(async (trx) => {
          const { rows } = await sql<{ free: number }>`
            select count(*)::int as free from pairs where owner = 'nobody'`.execute(trx);
          await bothRead();
          if ((rows[0]?.free ?? 0) === 2) {
            await sql`update pairs set owner = ${name} where id = ${id}`.execute(trx);
          }
          return name;
        });
    const results = await Promise.allSettled([claim('a', 1), claim('b', 2)]);

    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(failed).toHaveLength(1);
    expectConflictAnswer(failed[0]?.reason);
    expect(driverCode(failed[0]?.reason)).toBe('40001');
    expect((await owners()).filter((owner) => owner !== 'nobody')).toHaveLength(1);
  });
});
