import type { Kysely } from 'kysely';
import type { MigrationContext } from '../engine/dialect.js';

/**
 * Rate-limit counters shared by every API process, the idempotency keys of replays, and
 * leases that serialise work across processes (placing a repository's hooks).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('rate_limit_counters')
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('window_start', bigint, (c) => c.notNull())
    .addColumn('count', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_limit_counters_pk', ['bucket', 'window_start'])
    .execute();
  await db.schema
    .createIndex('rate_limit_counters_window')
    .on('rate_limit_counters')
    .column('window_start')
    .execute();

  await db.schema
    .createTable('replay_requests')
    .addColumn('requested_by', 'text', (c) => c.notNull())
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('replay_id', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('replay_requests_pk', ['requested_by', 'delivery_id', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('replay_requests_created').on('replay_requests').column('created_at').execute();

  await db.schema
    .createTable('leases')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .execute();
}
