import { type Kysely, sql } from 'kysely';
import type { MigrationContext } from '../engine/dialect.js';

/**
 * Bulk recoveries and alert errors, hardened:
 *
 * - at most one running recovery per connection, enforced by a partial unique index: the route
 *   checked for a running one and then inserted, and concurrent requests on PostgreSQL (READ
 *   COMMITTED) all passed the check, so their recoveries replayed the same deliveries twice. Running
 *   duplicates such a race left behind are cancelled first, the oldest of each connection kept (it
 *   replays what they would have: its window is the connection's failed deliveries like theirs);
 * - `turn_at`, when a worker last started a batch of the recovery: workers take the running
 *   recovery whose turn is oldest (domain/recovery.ts), so a long one no longer holds every other
 *   connection's behind it;
 * - an alert's `last_error`, which every member of the consumer account reads, held the raw error
 *   of the operator's receiver (its URL, credentials included). It is now an error category;
 *   earlier rows are rewritten to theirs.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  const now = Date.now();
  await sql`update recoveries set status = 'cancelled', finished_at = ${now}, updated_at = ${now},
      lease_owner = null, lease_expires_at = null
    where status = 'running' and exists (
      select 1 from recoveries older
      where older.subscription_id = recoveries.subscription_id and older.status = 'running'
        and older.recovery_id < recoveries.recovery_id)`.execute(db);
  await db.schema
    .createIndex('recoveries_running')
    .on('recoveries')
    .column('subscription_id')
    .unique()
    .where(sql.ref('status'), '=', sql.lit('running'))
    .execute();
  await db.schema.alterTable('recoveries').addColumn('turn_at', bigint).execute();

  await sql`update alerts set last_error = 'error_status'
    where last_error like 'the alert receiver answered HTTP%'`.execute(db);
  await sql`update alerts set last_error = 'unreachable'
    where last_error is not null and last_error <> 'error_status'`.execute(db);
}
