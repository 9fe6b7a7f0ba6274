import type { Kysely } from 'kysely';
import type { Database, DeliveryRow, ReplayRequestsTable } from './schema.js';

/** What replay needs from the store beyond deliveries: its idempotency keys and its rate. */

export function findReplayRequest(
  db: Kysely<Database>,
  requestedBy: string,
  deliveryId: string,
  key: string,
): Promise<ReplayRequestsTable | undefined> {
  return db
    .selectFrom('replay_requests')
    .selectAll()
    .where('requested_by', '=', requestedBy)
    .where('delivery_id', '=', deliveryId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
}

export async function recordReplayRequest(
  db: Kysely<Database>,
  request: { requestedBy: string; deliveryId: string; key: string; replayId: string },
  now: number,
): Promise<void> {
  await db
    .insertInto('replay_requests')
    .values({
      requested_by: request.requestedBy,
      delivery_id: request.deliveryId,
      idempotency_key: request.key,
      replay_id: request.replayId,
      created_at: now,
    })
    .execute();
}

/**
 * When the replays of a delivery's run to its subscription were created since `since`, oldest
 * first: a replay of a replay counts for the same delivery.
 */
export async function recentReplayTimes(
  db: Kysely<Database>,
  delivery: Pick<DeliveryRow, 'event_id' | 'subscription_id'>,
  since: number,
): Promise<number[]> {
  const rows = await db
    .selectFrom('deliveries')
    .select('dispatched_at')
    .where('event_id', '=', delivery.event_id)
    .where('subscription_id', '=', delivery.subscription_id)
    .where('replay_of', 'is not', null)
    .where('dispatched_at', '>', since)
    .orderBy('dispatched_at')
    .execute();
  return rows.map((row) => row.dispatched_at);
}

/** One batch of idempotency keys older than `cutoff`, for the retention sweeper. */
export async function deleteOldReplayRequests(
  db: Kysely<Database>,
  cutoff: number,
  batch: number,
): Promise<number> {
  const rows = await db
    .selectFrom('replay_requests')
    .select(['requested_by', 'delivery_id', 'idempotency_key'])
    .where('created_at', '<', cutoff)
    .limit(batch)
    .execute();
  for (const row of rows) {
    await db
      .deleteFrom('replay_requests')
      .where('requested_by', '=', row.requested_by)
      .where('delivery_id', '=', row.delivery_id)
      .where('idempotency_key', '=', row.idempotency_key)
      .execute();
  }
  return rows.length;
}
