import { type Kysely, sql } from 'kysely';
import { firstDeliveryIdAt, firstIdAt } from '../domain/ids.js';
import type { Database } from './schema.js';

/**
 * Deletes for the retention sweeper, each one batch at a time: a batch is a short transaction, so
 * ingestion and dispatch never wait long behind a sweep, however much has expired.
 */

/** Deletes the rows of one batch by key; returns how many keys there were. */
async function deleteKeys(
  db: Kysely<Database>,
  table: keyof Database,
  key: string,
  keys: Array<string | number>,
): Promise<number> {
  if (keys.length === 0) return 0;
  await sql`delete from ${sql.table(table)} where ${sql.ref(key)} in (${sql.join(keys)})`.execute(db);
  return keys.length;
}

/**
 * One batch of the rows of `table` whose `column` is before `bound` (`<`; `<=` for an expiry
 * reached at `bound`), deleted by `key`; returns how many.
 */
async function deleteBatchBefore<T extends keyof Database>(
  db: Kysely<Database>,
  table: T,
  key: keyof Database[T] & string,
  column: keyof Database[T] & string,
  bound: number,
  batch: number,
  op: '<' | '<=' = '<',
): Promise<number> {
  const { rows } = await sql<{
    k: string | number;
  }>`select ${sql.ref(key)} as k from ${sql.table(table)} where ${sql.ref(column)} ${sql.raw(op)} ${bound} limit ${batch}`.execute(
    db,
  );
  return deleteKeys(
    db,
    table,
    key,
    rows.map((row) => row.k),
  );
}

/**
 * Deliveries (with their attempts) dispatched before `cutoff`. Returns how many were deleted. The
 * range is read off the primary key: a delivery's id is a UUIDv7 of its creation, which is its
 * `dispatched_at` (migration 0017 dropped the index on that column, which served only this).
 */
export async function deleteExpiredDeliveries(
  db: Kysely<Database>,
  cutoff: number,
  batch: number,
): Promise<number> {
  const ids = (
    await db
      .selectFrom('deliveries')
      .select('delivery_id')
      .where('delivery_id', '<', firstDeliveryIdAt(cutoff))
      .where('dispatched_at', '<', cutoff)
      .limit(batch)
      .execute()
  ).map((row) => row.delivery_id);
  await deleteKeys(db, 'delivery_attempts', 'delivery_id', ids);
  return deleteKeys(db, 'deliveries', 'delivery_id', ids);
}

/**
 * Completion events received before `cutoff`, once no delivery refers to them any more. The range
 * is read off the primary key, a UUIDv7 of the event's `received_at`.
 */
export async function deleteExpiredEvents(
  db: Kysely<Database>,
  cutoff: number,
  batch: number,
): Promise<number> {
  const ids = (
    await db
      .selectFrom('events')
      .select('event_id')
      .where('event_id', '<', firstIdAt('evt', cutoff))
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
  return deleteKeys(db, 'events', 'event_id', ids);
}

/** Archives whose expiry time has passed (strictly). */
export async function deleteExpiredArchives(
  db: Kysely<Database>,
  now: number,
  batch: number,
): Promise<number> {
  return deleteBatchBefore(db, 'archives', 'event_id', 'expires_at', now, batch);
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
  await deleteKeys(
    db,
    'messages',
    'message_id',
    rows.map((row) => row.message_id),
  );
  for (const row of rows) perAccount.set(row.account_id, (perAccount.get(row.account_id) ?? 0) + 1);
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
  return deleteKeys(db, 'messages', 'message_id', ids);
}

/**
 * Remembered webhook delivery GUIDs older than `cutoff`: per hook (`webhook_receipts`; a GUID's
 * rows go together, its hooks received it within seconds of each other) and those written before
 * migration 0010 (`webhook_deliveries`, no longer written: it drains).
 */
export async function deleteOldWebhookDeliveries(
  db: Kysely<Database>,
  cutoff: number,
  batch: number,
): Promise<number> {
  return (
    (await deleteBatchBefore(db, 'webhook_receipts', 'delivery_guid', 'received_at', cutoff, batch)) +
    (await deleteBatchBefore(db, 'webhook_deliveries', 'delivery_guid', 'received_at', cutoff, batch))
  );
}

/** Console sessions that expired at or before `now`. */
export async function deleteExpiredSessions(
  db: Kysely<Database>,
  now: number,
  batch: number,
): Promise<number> {
  return deleteBatchBefore(db, 'sessions', 'session_hash', 'expires_at', now, batch, '<=');
}

/** Audit entries older than `cutoff`: kept as long as delivery records (domain/retention.ts). */
export async function deleteOldAuditEntries(
  db: Kysely<Database>,
  cutoff: number,
  batch: number,
): Promise<number> {
  return deleteBatchBefore(db, 'audit_entries', 'audit_id', 'created_at', cutoff, batch);
}

/** Schema violations older than `cutoff`: kept as long as the delivery records of their runs. */
export async function deleteOldSchemaViolations(
  db: Kysely<Database>,
  cutoff: number,
  batch: number,
): Promise<number> {
  return deleteBatchBefore(db, 'schema_violations', 'violation_id', 'created_at', cutoff, batch);
}
