import { type Kysely, sql } from 'kysely';

/**
 * Fewer index entries per delivery. Every full index of `deliveries` takes one entry for each
 * insert and again for each update that is not HOT, and the attempt's update (it changes
 * `dispatch_state`, `next_attempt_at` and `awaiting_start_since`) never is. Partial indexes take
 * entries only for the rows their predicate holds for. What each index of `deliveries` is for, after this migration:
 *
 * - `deliveries_pkey` (delivery_id): lookups by id; and, the id being a UUIDv7 of the delivery's
 *   creation (= `dispatched_at`), the retention sweep's range of expired deliveries
 *   (store/retention.ts). `deliveries_dispatched (dispatched_at)` served only that sweep: dropped.
 * - `deliveries_due` (next_attempt_at) where pending: the queue (claims, the next due time, the
 *   /metrics backlog, a connection's pending count, a dispatch in flight to a repository). Was
 *   (dispatch_state, next_attempt_at) over every delivery, to count the accepted and failed ones
 *   for /metrics; an accepted delivery, nearly all of them, now leaves it at its attempt. The
 *   queries that use it name 'pending' as a literal: a partial index serves a prepared statement's
 *   generic plan only when the predicate is in its text.
 * - `deliveries_dispatch_failed` (dispatched_at) where failed: new, /metrics' count of deliveries
 *   GitHub refused for good (few); the accepted ones are the rest of the table's count.
 * - `deliveries_subscription_dispatched` (subscription_id, dispatched_at): health, recovery windows,
 *   a connection's history and last event, a connection's Delivery Status page.
 * - `deliveries_provider_account`, `deliveries_consumer_account` (account, delivery_id): Delivery
 *   Status, newest first, for each side (store/delivery-records.ts).
 * - `deliveries_correlation` (correlation_id, consumer_repository_id): the consumer's confirm and
 *   complete calls, and the per-delivery token's candidates.
 * - `deliveries_event` (event_id): the event retention's check that no delivery refers to an event,
 *   and a delivery's recent replays.
 * - partial, holding only the few rows they serve: `deliveries_awaiting_start`,
 *   `deliveries_not_started`, `deliveries_consumer_failure`, `deliveries_run_follow`,
 *   `deliveries_consumer_run` (migrations 0005, 0008, 0014).
 *
 * `events_account_received` (account_id, received_at) served no query: dropped; the event retention
 * reads its range off the primary key (UUIDv7 of `received_at`) the same way.
 *
 * No fillfactor: a free part of each page would let an update that changes no indexed column be
 * HOT (no index entry at all), but the updates a delivery lives through all change one. The
 * attempt changes `dispatch_state` and `next_attempt_at` (and sets `awaiting_start_since`), the
 * consumer's confirm clears `awaiting_start_since`, its complete sets `consumer_conclusion`
 * (predicate of `deliveries_consumer_failure`), the not-started pass sets `not_started_at`; and a
 * claim, which would qualify, is rare on PostgreSQL (most deliveries are leased as they are
 * created). Free space on every page would cost every scan and the cache for that.
 *
 * A process of the previous version running during a rolling upgrade still works, more slowly:
 * its retention sweep scans, and its queue statements, which pass 'pending' as a parameter, get a
 * plan made for each run (a generic plan cannot use the partial index).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('deliveries_dispatched').execute();
  await db.schema.dropIndex('deliveries_due').execute();
  await db.schema
    .createIndex('deliveries_due')
    .on('deliveries')
    .column('next_attempt_at')
    .where(sql.ref('dispatch_state'), '=', sql.lit('pending'))
    .execute();
  await db.schema
    .createIndex('deliveries_dispatch_failed')
    .on('deliveries')
    .column('dispatched_at')
    .where(sql.ref('dispatch_state'), '=', sql.lit('failed'))
    .execute();
  await db.schema.dropIndex('events_account_received').execute();
}
