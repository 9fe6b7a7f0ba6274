import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * Which store the integration suites run on. `npm test` runs them twice (vitest projects `sqlite`
 * and `postgres`, see vitest.config.ts); each PostgreSQL run creates and drops its own databases on
 * the local server.
 */
export const TEST_STORE: 'sqlite' | 'postgres' =
  process.env.ZEKT_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

const ADMIN_URL = process.env.ZEKT_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A fresh, empty PostgreSQL database; `drop` removes it (with any connection still open to it). */
export async function createTestDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `zekt_test_${randomBytes(6).toString('hex')}`;
  await admin(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => admin(`drop database if exists ${name} with (force)`),
  };
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
