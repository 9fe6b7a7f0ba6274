import { type Kysely, sql } from 'kysely';
import type { MigrationContext } from '../dialect.js';

/**
 * Issue 11, PostgreSQL ingest: every event of an account added to the same counter rows, and each
 * webhook's transaction held their lock until its COMMIT, so an account's webhooks committed one
 * after another, never in one flush (the counter upsert averaged 4.9 ms under 32 concurrent
 * webhooks, almost all of it waiting). A counter is now spread over a few rows (`shard`) that a
 * write picks at random, and a read sums them, as it already summed days. Existing counts become
 * shard 0. The table is rebuilt on both stores: SQLite cannot change a primary key in place.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('usage_daily_sharded')
    .addColumn('account_id', bigint, (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('counter', 'text', (c) => c.notNull())
    .addColumn('shard', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('value', bigint, (c) => c.notNull().defaultTo(0))
    // Not usage_daily_pk: PostgreSQL names a primary key's index in the schema, where the old one
    // still is until its table is dropped.
    .addPrimaryKeyConstraint('usage_daily_key', ['account_id', 'day', 'counter', 'shard'])
    .execute();
  await sql`insert into usage_daily_sharded (account_id, day, counter, shard, value)
    select account_id, day, counter, 0, value from usage_daily`.execute(db);
  await db.schema.dropTable('usage_daily').execute();
  await db.schema.alterTable('usage_daily_sharded').renameTo('usage_daily').execute();
}
