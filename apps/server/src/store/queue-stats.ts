import type { Kysely } from 'kysely';
import type { Database, DispatchState } from './schema.js';

/**
 * What `/metrics` reports about the delivery queue, read at scrape time. Every query is answered
 * from an index: the grouping and the due range from `deliveries_due (dispatch_state,
 * next_attempt_at)`, the deliveries waiting for their workflow from the partial
 * `deliveries_awaiting_start`. Counts span every account: the numbers are the deployment's, and no
 * account is named.
 */
export interface QueueStats {
  /** Deliveries by the queue's view of the platform call. */
  byDispatchState: Record<DispatchState, number>;
  /** Accepted by GitHub, durable, and no sign of their consumer workflow yet. */
  awaitingStart: number;
  /** Pending deliveries due now (the backlog a worker could start). */
  dueNow: number;
  /** When the longest-waiting due delivery became due (null: none is due). */
  oldestDueAt: number | null;
}

export async function readQueueStats(db: Kysely<Database>, now: number): Promise<QueueStats> {
  const [states, awaiting, due] = await Promise.all([
    db
      .selectFrom('deliveries')
      .select((eb) => ['dispatch_state', eb.fn.countAll<number | string>().as('count')])
      .groupBy('dispatch_state')
      .execute(),
    db
      .selectFrom('deliveries')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('awaiting_start_since', 'is not', null)
      .executeTakeFirst(),
    db
      .selectFrom('deliveries')
      .select((eb) => [
        eb.fn.countAll<number | string>().as('count'),
        eb.fn.min('next_attempt_at').as('oldest'),
      ])
      .where('dispatch_state', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .executeTakeFirst(),
  ]);
  const byDispatchState: Record<DispatchState, number> = { pending: 0, accepted: 0, failed: 0 };
  for (const row of states) byDispatchState[row.dispatch_state] = Number(row.count);
  return {
    byDispatchState,
    awaitingStart: Number(awaiting?.count ?? 0),
    dueNow: Number(due?.count ?? 0),
    oldestDueAt: due?.oldest == null ? null : Number(due.oldest),
  };
}
