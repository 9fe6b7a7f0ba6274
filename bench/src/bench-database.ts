import { redactUrl } from '@zekt/server/dist/redact-url.js';
import { openStore } from '@zekt/server/dist/store/store.js';
import { sql } from 'kysely';
import pg from 'pg';

// PostgreSQL's SQLSTATEs: the database named in the URL does not exist; it was created meanwhile.
const INVALID_CATALOG_NAME = '3D000';
const DUPLICATE_DATABASE = '42P04';

/**
 * The PostgreSQL database `zekt bench --compare --database-url` runs on, emptied: a throwaway one,
 * created on the same server when it does not exist yet (a fresh machine has only `postgres`), and
 * every target starts from an empty schema.
 */
export async function emptyBenchDatabase(url: string): Promise<void> {
  await createDatabaseIfMissing(url);
  const store = await openStore({ kind: 'postgres', url, poolSize: 1 });
  try {
    await sql`drop schema public cascade`.execute(store.db);
    await sql`create schema public`.execute(store.db);
  } finally {
    await store.close();
  }
}

/** Creates the database `url` names, through the server's `postgres` database, unless it exists. */
export async function createDatabaseIfMissing(url: string): Promise<void> {
  if (await databaseExists(url)) return;
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  if (name === '') throw new Error(`the database URL names no database: ${redactUrl(url)}`);
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const client = new pg.Client({ connectionString: maintenance.toString() });
  await client.connect();
  try {
    await client.query(`create database ${client.escapeIdentifier(name)}`);
  } catch (error) {
    if ((error as { code?: string }).code !== DUPLICATE_DATABASE) throw error;
  } finally {
    await client.end();
  }
}

async function databaseExists(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === INVALID_CATALOG_NAME) return false;
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}
