import type { Kysely } from 'kysely';

/**
 * Fewer index entries per delivery. Every full index of `deliveries` takes one entry for each
 * insert and again for each update that is not HOT, and the attempt's update (it changes
 * `dispatch_state`, `next_attempt_at` and `awaiting_start_since`) never is. Partial indexes take
 * entries only for the rows their predicate holds for. What each index of `deliveries` is for,
 * after this migration:
 *
 * - `deliveries_pkey` (delivery_id): lookups by id; and, the id being a UUIDv7 of the delivery's
 *   creation (= `dispatched_at`), the retention sweep's range of expired deliveries
 *   (store/retention.ts). `deliveries_dispatched (dispatched_at)` served only that sweep: dropped.
 * - `deliveries_due` (dispatch_state, next_attempt_at): the queue (claims, the next due time, a
 *   connection's pending count, a dispatch in flight to a repository) and /metrics' count of each
 *   state. Kept over every delivery: made partial (pending ones only), PostgreSQL's crash-recovery
 *   suite saw a delivery claimed once more than it should be after its worker died, which is not
 *   understood yet; until it is, the queue keeps the index it was proven with.
 *   (On 30 November the partial index, `git revert d004bd2` on that day's code, passed on
 *   PostgreSQL `test/crash-recovery.test.ts` seven times of seven, `test/crash-ledger.test.ts`
 *   four of four and `test/postgres/scale-out.test.ts` five of five: the failure is not
 *   reproduced, and not explained either. What it would buy is small: one index entry of ~26 per
 *   event, docs/performance.md, *Durable delivery on PostgreSQL*.)
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
 * A process of the previous version running during a rolling upgrade still works; only its
 * retention sweep scans, without the index on `dispatched_at`.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('deliveries_dispatched').execute();
  await db.schema.dropIndex('events_account_received').execute();
}
