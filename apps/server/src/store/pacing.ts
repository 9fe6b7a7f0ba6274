import { type Kysely, sql } from 'kysely';
import type { SqlDialect } from './engine/dialect.js';
import type { Database } from './schema.js';

/**
 * Per-installation pacing: each consumer account's installation gets dispatch slots
 * `intervalMs` apart. Reserving a slot is one atomic upsert, so workers in several processes share
 * one schedule through the store. Returns the start of the reserved slot: now, or later when the
 * installation's earlier slots are taken.
 */
export async function reserveDispatchSlot(
  db: Kysely<Database>,
  dialect: SqlDialect,
  accountId: number,
  now: number,
  intervalMs: number,
): Promise<number> {
  const later =
    dialect === 'postgres'
      ? sql<number>`greatest(pacing_slots.next_slot_at, ${now})`
      : sql<number>`max(next_slot_at, ${now})`;
  const row = await db
    .insertInto('pacing_slots')
    .values({ account_id: accountId, next_slot_at: now + intervalMs })
    .onConflict((oc) =>
      oc.column('account_id').doUpdateSet({ next_slot_at: sql<number>`${later} + ${intervalMs}` }),
    )
    .returning('next_slot_at')
    .executeTakeFirstOrThrow();
  return row.next_slot_at - intervalMs;
}
