import { type Kysely, sql } from 'kysely';
import type { Database, DispatchState } from './schema.js';

/**
 * What `/metrics` reports about the delivery queue, read at scrape time. Every query is answered
 * from an index: the pending ones and the due range from the partial `deliveries_due`
 * (next_attempt_at, pending only), the failed ones from the partial `deliveries_dispatch_failed`,
 * the deliveries waiting for their workflow from the partial `deliveries_awaiting_start`; the
 * accepted ones, nearly every delivery, are the rest of the table's count, which no index narrows
 * (migration 0017: an index over every delivery's state cost each insert and attempt an entry).
 * 'pending' and 'failed' are literals: a partial index serves only a statement whose text names
 * its predicate. Counts span every account: the numbers are the deployment's, and no account is
 * named.
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
  // One statement for the counts, so the accepted ones (the rest) come from the same snapshot.
  const count = (state: 'pending' | 'failed') =>
    db
      .selectFrom('deliveries')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('dispatch_state', '=', sql.lit(state));
  const [counts, awaiting, due] = await Promise.all([
    db
      .selectNoFrom((eb) => [
        eb.selectFrom('deliveries').select(eb.fn.countAll<number | string>().as('n')).as('total'),
        count('pending').as('pending'),
        count('failed').as('failed'),
      ])
      .executeTakeFirst(),
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
      .where('dispatch_state', '=', sql.lit('pending'))
      .where('next_attempt_at', '<=', now)
      .executeTakeFirst(),
  ]);
  const pending = Number(counts?.pending ?? 0);
  const failed = Number(counts?.failed ?? 0);
  const byDispatchState: Record<DispatchState, number> = {
    pending,
    accepted: Number(counts?.total ?? 0) - pending - failed,
    failed,
  };
  return {
    byDispatchState,
    awaitingStart: Number(awaiting?.count ?? 0),
    dueNow: Number(due?.count ?? 0),
    oldestDueAt: due?.oldest == null ? null : Number(due.oldest),
  };
}
