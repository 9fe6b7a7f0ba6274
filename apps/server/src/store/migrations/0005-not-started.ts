import { type Kysely, sql } from 'kysely';
import type { MigrationContext } from '../engine/dialect.js';

/**
 * Never-started deliveries (domain/not-started.ts). `awaiting_start_since` is set when
 * GitHub accepts a durable delivery and cleared by its confirm, its complete or a run seen by
 * completion tracking (`run_seen_at`, which may arrive before the acceptance is recorded); the
 * flagging pass sets `not_started_at` on the ones still waiting too long.
 * The partial index holds only the waiting ones, so the pass never reads finished deliveries.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema.alterTable('deliveries').addColumn('awaiting_start_since', bigint).execute();
  await db.schema.alterTable('deliveries').addColumn('not_started_at', bigint).execute();
  await db.schema.alterTable('deliveries').addColumn('run_seen_at', bigint).execute();
  await db.schema
    .createIndex('deliveries_awaiting_start')
    .on('deliveries')
    .column('awaiting_start_since')
    .where(sql.ref('awaiting_start_since'), 'is not', null)
    .execute();
  // Durable deliveries accepted before this version and never reported wait from their dispatch.
  const durable = sql.raw(dialect === 'postgres' ? 'durable' : 'durable = 1');
  await sql`update deliveries set awaiting_start_since = dispatched_at
    where ${durable} and dispatch_state = 'accepted' and status = 'Dispatched'`.execute(db);
}
