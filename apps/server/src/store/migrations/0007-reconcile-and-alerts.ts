import type { Kysely } from 'kysely';
import type { MigrationContext } from '../engine/dialect.js';

/**
 * The redeliveries the reconciler asked GitHub for, the alert outbox, and the
 * last health each connection was seen in (so a change of health is noticed once).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('redelivery_requests')
    .addColumn('delivery_guid', 'text', (c) => c.primaryKey())
    .addColumn('hook', 'text', (c) => c.notNull())
    .addColumn('github_delivery_id', bigint, (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('action', 'text')
    .addColumn('requested_at', bigint, (c) => c.notNull())
    .addColumn('recovered_at', bigint)
    .execute();
  await db.schema
    .createIndex('redelivery_requests_requested')
    .on('redelivery_requests')
    .column('requested_at')
    .execute();

  await db.schema
    .createTable('alerts')
    .addColumn('alert_id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', bigint, (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('dedup_key', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', bigint)
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', bigint)
    .addColumn('last_error', 'text')
    .addColumn('sent_at', bigint)
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('alerts_due').on('alerts').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('alerts_account').on('alerts').columns(['account_id', 'created_at']).execute();
  await db.schema.createIndex('alerts_dedup').on('alerts').columns(['dedup_key', 'created_at']).execute();

  await db.schema
    .createTable('connection_health_states')
    .addColumn('subscription_id', 'text', (c) => c.primaryKey())
    .addColumn('health', 'text', (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
}
