import { type Kysely, sql } from 'kysely';
import type { Database } from './schema.js';

/**
 * Deletes for the retention sweeper, each one batch at a time: a batch is a short transaction, so
 * ingestion and dispatch never wait long behind a sweep, however much has expired.
 */

/** Deliveries (with their attempts) dispatched before `cutoff`. Returns how many were deleted. */
export async function deleteExpiredDeliveries(
  db: Kysely<Database>,
  cutoff: number,
  batch: number,
): Promise<number> {
  const ids = (
    await db
      .selectFrom('deliveries')
      .select('delivery_id')
      .where('dispatched_at', '<', cutoff)
      .limit(batch)
      .execute()
  ).map((row) => row.delivery_id);
  if (ids.length === 0) return 0;
  await db.deleteFrom('delivery_attempts').where('delivery_id', 'in', ids).execute();
  await db.deleteFrom('deliveries').where('delivery_id', 'in', ids).execute();
  return ids.length;
}

/** Completion events received before `cutoff`, once no delivery refers to them any more. */
export async function deleteExpiredEvents(
  db: Kysely<Database>,
  cutoff: number,
  batch: number,
): Promise<number> {
  const ids = (
    await db
      .selectFrom('events')
      .select('event_id')
      .where('received_at', '<', cutoff)
      .where('route_status', '!=', 'pending')
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('deliveries')
              .select(sql`1`.as('one'))
              .whereRef('deliveries.event_id', '=', 'events.event_id'),
          ),
        ),
      )
      .limit(batch)
      .execute()
  ).map((row) => row.event_id);
  if (ids.length === 0) return 0;
  await db.deleteFrom('events').where('event_id', 'in', ids).execute();
  return ids.length;
}

/** Archives whose expiry time has passed (strictly). */
export async function deleteExpiredArchives(
  db: Kysely<Database>,
  now: number,
  batch: number,
): Promise<number> {
  const ids = (
    await db.selectFrom('archives').select('event_id').where('expires_at', '<', now).limit(batch).execute()
  ).map((row) => row.event_id);
  if (ids.length === 0) return 0;
  await db.deleteFrom('archives').where('event_id', 'in', ids).execute();
  return ids.length;
}

/**
 * Pending messages received before `cutoff`: their run's completion event never arrived. Returns
 * how many were removed per account, for the `messages_orphaned` counter.
 */
export async function deleteOrphanedMessages(
  db: Kysely<Database>,
  cutoff: number,
  batch: number,
): Promise<Map<number, number>> {
  const rows = await db
    .selectFrom('messages')
    .select(['message_id', 'account_id'])
    .where('status', '=', 'pending')
    .where('received_at', '<', cutoff)
    .limit(batch)
    .execute();
  const perAccount = new Map<number, number>();
  if (rows.length === 0) return perAccount;
  await db
    .deleteFrom('messages')
    .where(
      'message_id',
      'in',
      rows.map((row) => row.message_id),
    )
    .execute();
  for (const row of rows)
    perAccount.set(Number(row.account_id), (perAccount.get(Number(row.account_id)) ?? 0) + 1);
  return perAccount;
}

/** Routed messages received before `cutoff`: their payload lives on in the archive. */
export async function deleteRoutedMessages(
  db: Kysely<Database>,
  cutoff: number,
  batch: number,
): Promise<number> {
  const ids = (
    await db
      .selectFrom('messages')
      .select('message_id')
      .where('status', '=', 'routed')
      .where('received_at', '<', cutoff)
      .limit(batch)
      .execute()
  ).map((row) => row.message_id);
  if (ids.length === 0) return 0;
  await db.deleteFrom('messages').where('message_id', 'in', ids).execute();
  return ids.length;
}

/** Remembered webhook delivery GUIDs older than `cutoff`. */
export async function deleteOldWebhookDeliveries(
  db: Kysely<Database>,
  cutoff: number,
  batch: number,
): Promise<number> {
  const ids = (
    await db
      .selectFrom('webhook_deliveries')
      .select('delivery_guid')
      .where('received_at', '<', cutoff)
      .limit(batch)
      .execute()
  ).map((row) => row.delivery_guid);
  if (ids.length === 0) return 0;
  await db.deleteFrom('webhook_deliveries').where('delivery_guid', 'in', ids).execute();
  return ids.length;
}
