import type { Kysely } from 'kysely';
import type { MigrationContext } from '../engine/dialect.js';

/**
 * PostgreSQL ingest: every event of an account added to the same counter rows of
 * `usage_daily`, and each webhook's transaction held their lock until its COMMIT, so an account's
 * webhooks committed one after another, never in one flush (the counter upsert averaged 4.9 ms
 * under 32 concurrent webhooks, almost all of it waiting). Counts are now added to one of a few
 * rows per counter (`shard`, picked at random per write) in a table of their own; reads sum both
 * tables. A new table rather than a new key on the old one: migrations only add, so a process of
 * the previous version, still writing `usage_daily` with its three-column conflict target during
 * a rolling upgrade, keeps working and its counts are still read (docs/operations.md).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('usage_daily_shards')
    .addColumn('account_id', bigint, (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('counter', 'text', (c) => c.notNull())
    .addColumn('shard', 'integer', (c) => c.notNull())
    .addColumn('value', bigint, (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('usage_daily_shards_pk', ['account_id', 'day', 'counter', 'shard'])
    .execute();
}
