import { type Kysely, sql } from 'kysely';
import type { MigrationContext } from '../engine/dialect.js';

/**
 * diagnostics with years of history: the failed attempts of a connection in the last 30
 * days were found by joining every delivery the connection ever had to its attempts. A delivery can
 * be attempted long after it was created (replay, recovery), so the delivery's own time cannot
 * bound that read; the attempt's time can, once the attempt carries its connection. The index
 * holds (connection, outcome, time): the window's failures of one connection, and nothing else.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  await db.schema.alterTable('delivery_attempts').addColumn('subscription_id', 'text').execute();
  await sql`update delivery_attempts set subscription_id = (
      select d.subscription_id from deliveries d where d.delivery_id = delivery_attempts.delivery_id
    )`.execute(db);
  if (dialect === 'postgres') {
    // Attempts are deleted with their delivery (store/retention.ts), so none is left without one.
    await sql`alter table delivery_attempts alter column subscription_id set not null`.execute(db);
  }
  await db.schema
    .createIndex('delivery_attempts_subscription')
    .on('delivery_attempts')
    .columns(['subscription_id', 'outcome', 'started_at'])
    .execute();
  // Diagnostics' other two counts over 30 days read every delivery of the window to keep the few
  // never started or failed by the consumer's workflow. Partial indexes hold only those: an insert
  // (neither yet) does not touch them.
  await db.schema
    .createIndex('deliveries_not_started')
    .on('deliveries')
    .columns(['subscription_id', 'dispatched_at'])
    .where(sql.ref('not_started_at'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('deliveries_consumer_failure')
    .on('deliveries')
    .columns(['subscription_id', 'dispatched_at'])
    .where(sql.ref('consumer_conclusion'), '=', sql.lit('failure'))
    .execute();
}
