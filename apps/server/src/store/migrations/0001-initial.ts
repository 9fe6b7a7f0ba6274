import { type Kysely, sql } from 'kysely';
import type { MigrationContext } from '../engine/dialect.js';

/**
 * The initial schema. Never edit a migration once it has been released: add a new one.
 * Column types differ by dialect only where SQLite has no equivalent (booleans, 64-bit integers).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  const flag = dialect === 'postgres' ? 'boolean' : 'integer';
  const no = dialect === 'postgres' ? false : 0;

  await db.schema
    .createTable('accounts')
    .addColumn('account_id', bigint, (c) => c.primaryKey())
    .addColumn('login', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('installation_id', bigint, (c) => c.unique())
    .addColumn('installed_at', bigint)
    .addColumn('suspended_at', bigint)
    .addColumn('uninstalled_at', bigint)
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('accounts_login').on('accounts').column('login').execute();

  await db.schema
    .createTable('repositories')
    .addColumn('repository_id', bigint, (c) => c.primaryKey())
    .addColumn('account_id', bigint, (c) => c.notNull().references('accounts.account_id'))
    .addColumn('full_name', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('private', flag, (c) => c.notNull().defaultTo(no))
    .addColumn('provider_enabled', flag, (c) => c.notNull().defaultTo(no))
    .addColumn('completion_enabled', flag, (c) => c.notNull().defaultTo(no))
    .addColumn('removed_at', bigint)
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('repositories_account').on('repositories').column('account_id').execute();
  await db.schema.createIndex('repositories_full_name').on('repositories').column('full_name').execute();

  await db.schema
    .createTable('repository_hooks')
    .addColumn('repository_id', bigint, (c) => c.notNull().references('repositories.repository_id'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('hook_id', bigint, (c) => c.unique())
    .addColumn('secret_encrypted', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('repository_hooks_pk', ['repository_id', 'role'])
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('user_id', 'text', (c) => c.primaryKey())
    .addColumn('github_id', bigint, (c) => c.unique())
    .addColumn('login', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('memberships')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id'))
    .addColumn('account_id', bigint, (c) => c.notNull().references('accounts.account_id'))
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('memberships_pk', ['user_id', 'account_id'])
    .execute();

  await db.schema
    .createTable('api_tokens')
    .addColumn('token_id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('last_used_at', bigint)
    .addColumn('revoked_at', bigint)
    .execute();

  await db.schema
    .createTable('workflows')
    .addColumn('repository_id', bigint, (c) => c.notNull().references('repositories.repository_id'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('whitelisted', flag, (c) => c.notNull().defaultTo(no))
    .addColumn('blocked_count', bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('first_seen_at', bigint)
    .addColumn('last_seen_at', bigint)
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('workflows_pk', ['repository_id', 'path'])
    .execute();

  await db.schema
    .createTable('services')
    .addColumn('service_id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', bigint, (c) => c.notNull().references('accounts.account_id'))
    .addColumn('repository_id', bigint, (c) => c.notNull().references('repositories.repository_id'))
    .addColumn('workflow_path', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('tags', 'text', (c) => c.notNull())
    .addColumn('visibility', 'text', (c) => c.notNull())
    .addColumn('published', flag, (c) => c.notNull().defaultTo(no))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .addUniqueConstraint('services_account_slug', ['account_id', 'slug'])
    .execute();
  await db.schema
    .createIndex('services_workflow')
    .on('services')
    .columns(['repository_id', 'workflow_path'])
    .execute();

  await db.schema
    .createTable('subscriptions')
    .addColumn('subscription_id', 'text', (c) => c.primaryKey())
    .addColumn('service_id', 'text', (c) => c.notNull().references('services.service_id'))
    .addColumn('consumer_account_id', bigint, (c) => c.notNull().references('accounts.account_id'))
    .addColumn('consumer_repository_id', bigint, (c) => c.notNull().references('repositories.repository_id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('durable', flag, (c) => c.notNull().defaultTo(no))
    .addColumn('requested_by', 'text', (c) => c.notNull())
    .addColumn('requested_at', bigint, (c) => c.notNull())
    .addColumn('decided_by', 'text')
    .addColumn('decided_at', bigint)
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('subscriptions_service')
    .on('subscriptions')
    .columns(['service_id', 'status'])
    .execute();
  await db.schema
    .createIndex('subscriptions_consumer')
    .on('subscriptions')
    .columns(['consumer_account_id', 'status'])
    .execute();
  // One live (requested or approved) subscription per service and consumer repository.
  await db.schema
    .createIndex('subscriptions_live')
    .on('subscriptions')
    .columns(['service_id', 'consumer_repository_id'])
    .unique()
    .where(sql<boolean>`status in ('requested', 'approved')`)
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('delivery_guid', 'text', (c) => c.primaryKey())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('hook_id', bigint)
    .addColumn('received_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_received')
    .on('webhook_deliveries')
    .column('received_at')
    .execute();

  await db.schema
    .createTable('events')
    .addColumn('event_id', 'text', (c) => c.primaryKey())
    .addColumn('repository_id', bigint, (c) => c.notNull())
    .addColumn('run_id', bigint, (c) => c.notNull())
    .addColumn('run_attempt', 'integer', (c) => c.notNull())
    .addColumn('account_id', bigint, (c) => c.notNull())
    .addColumn('workflow_path', 'text', (c) => c.notNull())
    .addColumn('workflow_name', 'text', (c) => c.notNull())
    .addColumn('conclusion', 'text')
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('received_at', bigint, (c) => c.notNull())
    .addColumn('route_after', bigint, (c) => c.notNull())
    .addColumn('route_status', 'text', (c) => c.notNull())
    .addColumn('routed_at', bigint)
    .addColumn('message_id', 'text')
    .addColumn('deliveries_created', 'integer', (c) => c.notNull().defaultTo(0))
    .addUniqueConstraint('events_run_key', ['repository_id', 'run_id', 'run_attempt'])
    .execute();
  await db.schema
    .createIndex('events_pending')
    .on('events')
    .columns(['route_status', 'route_after'])
    .execute();
  await db.schema
    .createIndex('events_account_received')
    .on('events')
    .columns(['account_id', 'received_at'])
    .execute();

  await db.schema
    .createTable('messages')
    .addColumn('message_id', 'text', (c) => c.primaryKey())
    .addColumn('repository_id', bigint, (c) => c.notNull())
    .addColumn('run_id', bigint, (c) => c.notNull())
    .addColumn('run_attempt', 'integer', (c) => c.notNull())
    .addColumn('account_id', bigint, (c) => c.notNull())
    .addColumn('workflow_path', 'text')
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('payload_bytes', 'integer', (c) => c.notNull())
    .addColumn('sender', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('received_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .addUniqueConstraint('messages_run_key', ['repository_id', 'run_id', 'run_attempt'])
    .execute();
  await db.schema
    .createIndex('messages_status_received')
    .on('messages')
    .columns(['status', 'received_at'])
    .execute();

  await db.schema
    .createTable('archives')
    .addColumn('event_id', 'text', (c) => c.primaryKey())
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('has_message', flag, (c) => c.notNull())
    .addColumn('payload', 'text')
    .addColumn('payload_bytes', 'integer', (c) => c.notNull())
    .addColumn('archived_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('archives_expires').on('archives').column('expires_at').execute();

  await db.schema
    .createTable('deliveries')
    .addColumn('delivery_id', 'text', (c) => c.primaryKey())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('subscription_id', 'text', (c) => c.notNull())
    .addColumn('service_id', 'text', (c) => c.notNull())
    .addColumn('provider_account_id', bigint, (c) => c.notNull())
    .addColumn('provider_repository_id', bigint, (c) => c.notNull())
    .addColumn('consumer_account_id', bigint, (c) => c.notNull())
    .addColumn('consumer_repository_id', bigint, (c) => c.notNull())
    .addColumn('correlation_id', 'text', (c) => c.notNull())
    .addColumn('run_attempt', 'integer', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('durable', flag, (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('dispatch_state', 'text', (c) => c.notNull())
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', bigint)
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', bigint)
    .addColumn('dispatched_at', bigint, (c) => c.notNull())
    .addColumn('confirmed_at', bigint)
    .addColumn('completed_at', bigint)
    .addColumn('consumer_conclusion', 'text')
    .addColumn('is_finalized', flag, (c) => c.notNull().defaultTo(no))
    .addColumn('confirmation_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('retry_number', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('platform_response', 'text')
    .addColumn('failure_reason', 'text')
    .addColumn('replay_of', 'text')
    .addColumn('replayed_by', 'text')
    .addColumn('payload_by_reference', flag, (c) => c.notNull().defaultTo(no))
    // A dispatch slot of the consumer's installation is already reserved for next_attempt_at.
    .addColumn('slot_reserved', flag, (c) => c.notNull().defaultTo(no))
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  // The queue: due work is found by state and time, without touching finished deliveries.
  await db.schema
    .createIndex('deliveries_due')
    .on('deliveries')
    .columns(['dispatch_state', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('deliveries_subscription_dispatched')
    .on('deliveries')
    .columns(['subscription_id', 'dispatched_at'])
    .execute();
  await db.schema
    .createIndex('deliveries_correlation')
    .on('deliveries')
    .columns(['correlation_id', 'consumer_repository_id'])
    .execute();
  await db.schema.createIndex('deliveries_event').on('deliveries').column('event_id').execute();
  // Delivery Status lists, newest first, for either side of a connection.
  await db.schema
    .createIndex('deliveries_provider_account')
    .on('deliveries')
    .columns(['provider_account_id', 'delivery_id'])
    .execute();
  await db.schema
    .createIndex('deliveries_consumer_account')
    .on('deliveries')
    .columns(['consumer_account_id', 'delivery_id'])
    .execute();
  await db.schema.createIndex('deliveries_dispatched').on('deliveries').column('dispatched_at').execute();

  await db.schema
    .createTable('delivery_attempts')
    .addColumn('attempt_id', 'text', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('started_at', bigint, (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error_category', 'text')
    .addColumn('error_message', 'text')
    .addColumn('response_headers', 'text')
    .addUniqueConstraint('delivery_attempts_number', ['delivery_id', 'number'])
    .execute();

  // Per-installation pacing: the next free dispatch slot of each consumer account.
  await db.schema
    .createTable('pacing_slots')
    .addColumn('account_id', bigint, (c) => c.primaryKey())
    .addColumn('next_slot_at', bigint, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('usage_counters')
    .addColumn('account_id', bigint, (c) => c.notNull())
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('counter', 'text', (c) => c.notNull())
    .addColumn('value', bigint, (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('usage_counters_pk', ['account_id', 'month', 'counter'])
    .execute();
}
