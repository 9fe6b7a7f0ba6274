import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { emptyBenchDatabase } from '../../src/bench-database.js';

/**
 * `zekt bench --compare --database-url` on a fresh machine: the database it names does not exist
 * yet, and the bench creates it instead of failing on its first connection.
 */
const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `zekt_bench_${randomBytes(5).toString('hex')}`;
const url = `postgres://postgres@127.0.0.1:5432/${name}`;

async function onServer<T>(connectionString: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  await onServer(ADMIN_URL, (c) => c.query(`drop database if exists ${name} with (force)`));
});

describe('the bench database', () => {
  it('is created when missing, and emptied when it exists', async () => {
    const exists = () =>
      onServer(
        ADMIN_URL,
        async (c) => (await c.query('select 1 from pg_database where datname = $1', [name])).rowCount,
      );
    expect(await exists()).toBe(0);

    await emptyBenchDatabase(url);
    expect(await exists()).toBe(1);

    await onServer(url, (c) => c.query('create table leftover (id int)'));
    await emptyBenchDatabase(url);
    const tables = await onServer(url, async (c) =>
      (await c.query(`select tablename from pg_tables where schemaname = 'public'`)).rows.map(
        (r) => r.tablename,
      ),
    );
    expect(tables).toEqual([]);
  });
});
