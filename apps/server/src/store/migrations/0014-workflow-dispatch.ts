import { type Kysely, sql } from 'kysely';
import type { MigrationContext } from '../engine/dialect.js';

/**
 * Delivery by `workflow_dispatch` (domain/delivery-mode.ts, domain/run-following.ts).
 *
 * A subscription says how it delivers: `delivery_mode` (`repository_dispatch` for every existing
 * one), and for `workflow_dispatch` the workflow file and the ref (null: the default branch).
 *
 * A delivery keeps the consumer run GitHub created for it (`consumer_run_*`, from the dispatch's
 * answer). When Zekt follows that run itself (no completion tracking), `run_follow_at` is when it
 * reads the run next: the deliveries with one are the follow queue, claimed with the delivery's
 * lease columns (free once the dispatch was recorded) and counted in `run_follow_reads`. The
 * partial indexes hold only followed deliveries and deliveries with a known run, so neither the
 * follow pass nor a `workflow_run` webhook reads any other.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .alterTable('subscriptions')
    .addColumn('delivery_mode', 'text', (column) => column.notNull().defaultTo('repository_dispatch'))
    .execute();
  await db.schema.alterTable('subscriptions').addColumn('dispatch_workflow', 'text').execute();
  await db.schema.alterTable('subscriptions').addColumn('dispatch_ref', 'text').execute();

  await db.schema.alterTable('deliveries').addColumn('consumer_run_id', bigint).execute();
  await db.schema.alterTable('deliveries').addColumn('consumer_run_url', 'text').execute();
  await db.schema.alterTable('deliveries').addColumn('consumer_run_html_url', 'text').execute();
  await db.schema.alterTable('deliveries').addColumn('run_follow_at', bigint).execute();
  await db.schema
    .alterTable('deliveries')
    .addColumn('run_follow_reads', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('deliveries_run_follow')
    .on('deliveries')
    .column('run_follow_at')
    .where(sql.ref('run_follow_at'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('deliveries_consumer_run')
    .on('deliveries')
    .columns(['consumer_repository_id', 'consumer_run_id'])
    .where(sql.ref('consumer_run_id'), 'is not', null)
    .execute();
}
