import type { Kysely } from 'kysely';
import type { MigrationContext } from '../engine/dialect.js';

/**
 * The audit trail (one row per change and account concerned) and bulk recoveries (a job
 * row leased by one worker at a time, and the deliveries it handled, so none is replayed twice).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('audit_entries')
    .addColumn('audit_id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', bigint)
    .addColumn('actor_user_id', 'text')
    .addColumn('actor_login', 'text', (c) => c.notNull())
    .addColumn('actor_token_id', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text', (c) => c.notNull())
    .addColumn('before', 'text')
    .addColumn('after', 'text')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('audit_entries_account')
    .on('audit_entries')
    .columns(['account_id', 'audit_id'])
    .execute();
  await db.schema.createIndex('audit_entries_created').on('audit_entries').column('created_at').execute();

  await db.schema
    .createTable('recoveries')
    .addColumn('recovery_id', 'text', (c) => c.primaryKey())
    .addColumn('subscription_id', 'text', (c) => c.notNull())
    .addColumn('requested_by', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text')
    .addColumn('states', 'text', (c) => c.notNull())
    .addColumn('since_at', bigint, (c) => c.notNull())
    .addColumn('until_at', bigint, (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('replayed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('skipped', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('position', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', bigint)
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .addColumn('finished_at', bigint)
    .execute();
  await db.schema
    .createIndex('recoveries_idempotency')
    .on('recoveries')
    .columns(['requested_by', 'subscription_id', 'idempotency_key'])
    .unique()
    .execute();
  await db.schema.createIndex('recoveries_subscription').on('recoveries').column('subscription_id').execute();
  await db.schema.createIndex('recoveries_status').on('recoveries').column('status').execute();

  await db.schema
    .createTable('recovery_items')
    .addColumn('recovery_id', 'text', (c) => c.notNull())
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('replay_id', 'text')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('recovery_items_pk', ['recovery_id', 'delivery_id'])
    .execute();
}
