import { type Kysely, type NotNull, sql } from 'kysely';
import type { Database } from './schema.js';

/**
 * The store side of never-started deliveries (domain/not-started.ts). Every query here goes
 * through the partial index `deliveries_awaiting_start`, which holds only the deliveries still
 * waiting for their consumer workflow.
 */
export interface FlaggedDelivery {
  deliveryId: string;
  subscriptionId: string;
  consumerAccountId: number;
  eventType: string;
  notStartedAt: number;
}

/**
 * Flags one batch of deliveries waiting since `cutoff` or earlier; returns the flagged ones. A
 * delivery a report moved on meanwhile (its confirm raced the pass) only stops waiting.
 */
export async function flagNotStarted(
  db: Kysely<Database>,
  input: { cutoff: number; now: number; batch: number },
): Promise<{ examined: number; flagged: FlaggedDelivery[] }> {
  const due = db
    .selectFrom('deliveries')
    .select('delivery_id')
    .where('awaiting_start_since', 'is not', null)
    .where('awaiting_start_since', '<=', input.cutoff)
    .limit(input.batch);
  const rows = await db
    .updateTable('deliveries')
    .set({
      not_started_at: sql<
        number | null
      >`case when status = 'Dispatched' then ${sql.lit(Math.trunc(input.now))} else not_started_at end`,
      awaiting_start_since: null,
    })
    .where('delivery_id', 'in', due)
    .where('awaiting_start_since', 'is not', null)
    .returning([
      'delivery_id',
      'subscription_id',
      'consumer_account_id',
      'event_type',
      'status',
      'not_started_at',
    ])
    .execute();
  return {
    examined: rows.length,
    flagged: rows.flatMap((row) =>
      row.status === 'Dispatched' && row.not_started_at !== null
        ? [
            {
              deliveryId: row.delivery_id,
              subscriptionId: row.subscription_id,
              consumerAccountId: row.consumer_account_id,
              eventType: row.event_type,
              notStartedAt: row.not_started_at,
            },
          ]
        : [],
    ),
  };
}

/** Since when the longest-waiting delivery waits (null: none waits). */
export async function oldestAwaitingStart(db: Kysely<Database>): Promise<number | null> {
  const row = await db
    .selectFrom('deliveries')
    .select((eb) => eb.fn.min('awaiting_start_since').as('since'))
    .where('awaiting_start_since', 'is not', null)
    .executeTakeFirst();
  return row?.since ?? null;
}

/**
 * A run of the delivery was seen (completion tracking's `requested`): it started, stop waiting. The
 * mark stays, because the run may be seen before the dispatcher records GitHub's acceptance.
 */
export async function markRunSeen(db: Kysely<Database>, deliveryId: string, now: number): Promise<void> {
  await db
    .updateTable('deliveries')
    .set({ awaiting_start_since: null, run_seen_at: now })
    .where('delivery_id', '=', deliveryId)
    .where('run_seen_at', 'is', null)
    .execute();
}

/** Deliveries of a connection flagged not started since `since`: how many, their event types, the newest few. */
export async function notStartedOfConnection(
  db: Kysely<Database>,
  subscriptionId: string,
  since: number,
  newest: number,
): Promise<{
  count: number;
  eventTypes: string[];
  recent: Array<{
    delivery_id: string;
    attempt_count: number;
    not_started_at: number;
    platform_response: string | null;
  }>;
}> {
  const base = db
    .selectFrom('deliveries')
    .where('subscription_id', '=', subscriptionId)
    .where('dispatched_at', '>=', since)
    .where('not_started_at', 'is not', null);
  const counts = await base
    .select(['event_type', sql<number>`count(*)`.as('n')])
    .groupBy('event_type')
    .execute();
  const recent = await base
    .select(['delivery_id', 'attempt_count', 'not_started_at', 'platform_response'])
    .orderBy('not_started_at', 'desc')
    .limit(newest)
    .$narrowType<{ not_started_at: NotNull }>()
    .execute();
  return {
    count: counts.reduce((sum, row) => sum + row.n, 0),
    eventTypes: counts.map((row) => row.event_type).sort(),
    recent,
  };
}
