import { type Kysely, sql } from 'kysely';
import { DAY_MS } from '../domain/duration.js';
import { HEALTH_WINDOW_MS, RECENT_ACTIVITY_MS } from '../domain/health.js';
import type { Database } from './schema.js';

/**
 * The numbers behind health, My Connections and diagnostics, per connection (subscription). A
 * delivery succeeded when the consumer confirmed or completed it, or — non-durable deliveries have
 * no such states — when GitHub accepted its dispatch.
 */
export interface ConnectionStats {
  total24h: number;
  succeeded24h: number;
  failed24h: number;
  /** Flagged not started and still waiting (domain/not-started.ts): not succeeded, so they lower health. */
  notStarted24h: number;
  pending: number;
  total7d: number;
  lastEventAt: number | null;
}

/** A delivery that succeeded, as health counts it (see the comment above). */
const SUCCEEDED = sql`(status in ('Completed', 'Confirmed') or (durable = ${false} and dispatch_state = 'accepted' and status <> 'Failed'))`;

export function emptyStats(): ConnectionStats {
  return {
    total24h: 0,
    succeeded24h: 0,
    failed24h: 0,
    notStarted24h: 0,
    pending: 0,
    total7d: 0,
    lastEventAt: null,
  };
}

export async function connectionStats(
  db: Kysely<Database>,
  subscriptionIds: string[],
  now: number,
): Promise<Map<string, ConnectionStats>> {
  const stats = new Map<string, ConnectionStats>();
  if (subscriptionIds.length === 0) return stats;
  const dayAgo = now - HEALTH_WINDOW_MS;
  const weekAgo = now - RECENT_ACTIVITY_MS;
  // Every figure but two is about the last 7 days: only those rows are read, through the
  // (subscription, dispatched_at) index, however many years of records the table holds.
  const rows = await db
    .selectFrom('deliveries')
    .select([
      'subscription_id',
      sql<number>`sum(case when dispatched_at >= ${dayAgo} then 1 else 0 end)`.as('total_24h'),
      sql<number>`sum(case when dispatched_at >= ${dayAgo} and ${SUCCEEDED} then 1 else 0 end)`.as(
        'succeeded_24h',
      ),
      sql<number>`sum(case when dispatched_at >= ${dayAgo} and status = 'Failed' then 1 else 0 end)`.as(
        'failed_24h',
      ),
      sql<number>`sum(case when dispatched_at >= ${dayAgo} and not_started_at is not null and status = 'Dispatched' then 1 else 0 end)`.as(
        'not_started_24h',
      ),
      sql<number>`count(*)`.as('total_7d'),
      sql<number | null>`max(dispatched_at)`.as('last_event_at'),
    ])
    .where('subscription_id', 'in', subscriptionIds)
    .where('dispatched_at', '>=', weekAgo)
    .groupBy('subscription_id')
    .execute();
  for (const row of rows) {
    stats.set(row.subscription_id, {
      ...emptyStats(),
      total24h: row.total_24h,
      succeeded24h: row.succeeded_24h,
      failed24h: row.failed_24h,
      notStarted24h: row.not_started_24h,
      total7d: row.total_7d,
      lastEventAt: row.last_event_at,
    });
  }
  // Pending deliveries of any age: the queue's own index holds only those.
  const pending = await db
    .selectFrom('deliveries')
    .select(['subscription_id', sql<number>`count(*)`.as('pending')])
    .where('dispatch_state', '=', 'pending')
    .where('subscription_id', 'in', subscriptionIds)
    .groupBy('subscription_id')
    .execute();
  for (const row of pending) {
    const entry = stats.get(row.subscription_id) ?? emptyStats();
    entry.pending = row.pending;
    stats.set(row.subscription_id, entry);
  }
  // The last event of a connection quiet for a week: its newest row, one index probe each.
  for (const subscriptionId of subscriptionIds) {
    if (stats.get(subscriptionId)?.lastEventAt != null) continue;
    const last = await db
      .selectFrom('deliveries')
      .select('dispatched_at')
      .where('subscription_id', '=', subscriptionId)
      .orderBy('dispatched_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (last)
      stats.set(subscriptionId, {
        ...(stats.get(subscriptionId) ?? emptyStats()),
        lastEventAt: last.dispatched_at,
      });
  }
  return stats;
}

export interface FailedAttempt {
  delivery_id: string;
  number: number;
  started_at: number;
  status_code: number | null;
  error_category: string | null;
  error_message: string | null;
}

/** Failed dispatch attempts of a connection since `since`: counts per category and the newest few. */
export async function failedAttempts(
  db: Kysely<Database>,
  subscriptionId: string,
  since: number,
  newest: number,
): Promise<{ counts: Map<string, number>; recent: FailedAttempt[] }> {
  // From the attempts' own time, through (subscription, outcome, started_at): the window's failures
  // only, however many years of attempts the connection has (a delivery may be attempted long
  // after it was created, so the deliveries' time could not bound this).
  const base = db
    .selectFrom('delivery_attempts as a')
    .where('a.subscription_id', '=', subscriptionId)
    .where('a.outcome', '=', 'failed')
    .where('a.started_at', '>=', since);
  const counts = await base
    .select(['a.error_category', sql<number>`count(*)`.as('n')])
    .groupBy('a.error_category')
    .execute();
  const recent = await base
    .select([
      'a.delivery_id',
      'a.number',
      'a.started_at',
      'a.status_code',
      'a.error_category',
      'a.error_message',
    ])
    .orderBy('a.started_at', 'desc')
    .orderBy('a.attempt_id', 'desc')
    .limit(newest)
    .execute();
  return {
    counts: new Map(counts.map((row) => [row.error_category ?? 'other', row.n])),
    recent,
  };
}

/** Deliveries of a connection the consumer's workflow reported as failed, since `since`. */
export async function consumerFailures(
  db: Kysely<Database>,
  subscriptionId: string,
  since: number,
): Promise<number> {
  const row = await db
    .selectFrom('deliveries')
    .select(sql<number>`count(*)`.as('n'))
    .where('subscription_id', '=', subscriptionId)
    // A literal, so the planner can prove the partial index deliveries_consumer_failure applies.
    .where('consumer_conclusion', '=', sql.lit('failure'))
    .where('dispatched_at', '>=', since)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export interface DayStats {
  /** Days since the Unix epoch (UTC). */
  epochDay: number;
  total: number;
  succeeded: number;
  failed: number;
}

/** Deliveries of a connection per UTC day since `since`, counted the way health counts them. */
export async function connectionHistory(
  db: Kysely<Database>,
  subscriptionId: string,
  since: number,
): Promise<DayStats[]> {
  // A literal divisor: integer division on both stores (a bound parameter may be a float).
  const day = sql<number>`(dispatched_at / ${sql.lit(DAY_MS)})`;
  const rows = await db
    .selectFrom('deliveries')
    .select([
      day.as('epoch_day'),
      sql<number>`count(*)`.as('total'),
      sql<number>`sum(case when ${SUCCEEDED} then 1 else 0 end)`.as('succeeded'),
      sql<number>`sum(case when status = 'Failed' then 1 else 0 end)`.as('failed'),
    ])
    .where('subscription_id', '=', subscriptionId)
    .where('dispatched_at', '>=', since)
    .groupBy(day)
    .execute();
  return rows.map((row) => ({
    epochDay: Math.floor(row.epoch_day),
    total: row.total,
    succeeded: row.succeeded,
    failed: row.failed,
  }));
}
