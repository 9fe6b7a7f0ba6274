import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/store.js';
import { isStoreUnavailable } from '../../src/store/store-errors.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

/**
 * Statements on PostgreSQL are prepared with names (store/prepared-statements.ts), so each
 * connection parses and plans them once; off with ZEKT_DATABASE_PREPARED_STATEMENTS=false; and a
 * schema migrated under a prepared statement never fails a statement outside a transaction.
 */
let database: TestDatabase;
const stores: Store[] = [];

beforeEach(async () => {
  database = await createTestDatabase();
});

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  await database.drop();
});

async function open(preparedStatements?: boolean): Promise<Store> {
  // One connection: every statement below runs on the session pg_prepared_statements describes.
  const store = await openStore({
    kind: 'postgres',
    url: database.url,
    poolSize: 1,
    ...(preparedStatements === undefined ? {} : { preparedStatements }),
  });
  stores.push(store);
  return store;
}

async function preparedTexts(store: Store): Promise<string[]> {
  const { rows } = await sql<{ statement: string }>`
    select statement from pg_prepared_statements where name like 'zekt\\_%' order by statement`.execute(
    store.db,
  );
  return rows.map((r) => r.statement);
}

async function alter(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

describe('prepared statements on PostgreSQL', () => {
  it('prepares each statement once per connection, by name', async () => {
    const store = await open();
    for (let i = 0; i < 3; i++) await sql`select ${i}::int as n`.execute(store.db);
    const texts = await preparedTexts(store);
    expect(texts.filter((t) => t === 'select $1::int as n')).toHaveLength(1);
  });

  it('prepares nothing by name when turned off', async () => {
    const store = await open(false);
    await sql`select ${1}::int as n`.execute(store.db);
    expect(await preparedTexts(store)).toEqual([]);
  });

  it('runs a statement again unnamed when another process changed its result columns', async () => {
    const store = await open();
    await sql`create table widgets (a int)`.execute(store.db);
    await sql`insert into widgets values (1)`.execute(store.db);
    const read = () => sql<Record<string, number>>`select * from widgets`.execute(store.db);
    expect((await read()).rows).toEqual([{ a: 1 }]);

    await alter('alter table widgets add column b int default 2');
    expect((await read()).rows).toEqual([{ a: 1, b: 2 }]);
  });

  it('fails a transaction that meets a changed prepared statement as unavailable, and the retry passes', async () => {
    const store = await open();
    await sql`create table gadgets (a int)`.execute(store.db);
    await sql`insert into gadgets values (1)`.execute(store.db);
    const read = (db: Store['db']) => sql<Record<string, number>>`select * from gadgets`.execute(db);
    await read(store.db);

    await alter('alter table gadgets add column b int default 2');
    const failed = await store.db
      .transaction()
      .execute((trx) => read(trx))
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(isStoreUnavailable(failed)).toBe(true);
    const retried = await store.db.transaction().execute((trx) => read(trx));
    expect(retried.rows).toEqual([{ a: 1, b: 2 }]);
  });
});
