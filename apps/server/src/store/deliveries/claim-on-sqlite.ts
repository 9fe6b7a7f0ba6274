import { type Kysely, sql } from 'kysely';
import { sqliteList, sqliteListRows } from '../engine/bound-lists.js';
import { hotQuery } from '../engine/compiled-query.js';
import type { Database } from '../schema.js';
import { type ClaimOptions, type ClaimOutcome, dueAndFree, scanSize } from './claim-options.js';
import { withinFreeSlots } from './within-free-slots.js';

/**
 * SQLite's claim, inside the caller's transaction: the ids of the deliveries it leased.
 *
 * SQLite has one writer, so what a transaction reads as due is still due when it writes: the
 * claim is a read of the oldest due deliveries (one range of `deliveries_due`), the choice of
 * those within each installation's free slots (`withinFreeSlots`), and an update by primary key.
 * The single statement PostgreSQL needs to be safe among workers (a window function, two sorts in
 * temporary B-trees, RETURNING every column) cost 180–400 µs per claim on SQLite, the costliest
 * statement of the durable path; the read and the update cost ~30 µs together.
 */
export async function claimIdsOnSqlite(
  db: Kysely<Database>,
  options: ClaimOptions,
): Promise<ClaimOutcome<string>> {
  const scan = scanSize(options);
  const params = { now: options.now, scan, skip: sqliteList(options.skipAccounts ?? []) };
  const scanned = (await dueQuery.execute(db, params)).rows;
  const taken = withinFreeSlots(scanned, options);
  const chosen = taken.map((r) => r.delivery_id);
  const atCap = new Set(options.skipAccounts);
  if (taken.length < scanned.length) {
    const took = new Set(chosen);
    for (const row of scanned) if (!took.has(row.delivery_id)) atCap.add(row.consumer_account_id);
  }
  const outcome = {
    claimed: chosen,
    sawAll: scanned.length < scan && chosen.length < options.limit,
    atCap: [...atCap],
  };
  if (chosen.length === 0) return outcome;
  await leaseQuery.execute(db, {
    owner: options.owner,
    leaseExpiresAt: options.now + options.leaseMs,
    now: options.now,
    ids: sqliteList(chosen),
  });
  return outcome;
}

const dueQuery = hotQuery((db, p: { now: number; scan: number; skip: string }) =>
  dueAndFree(db.selectFrom('deliveries').select(['delivery_id', 'consumer_account_id']), p.now)
    .where(sql<boolean>`consumer_account_id not in ${sqliteListRows(p.skip)}`)
    .orderBy('next_attempt_at')
    .limit(p.scan),
);

const leaseQuery = hotQuery((db, p: { owner: string; leaseExpiresAt: number; now: number; ids: string }) =>
  db
    .updateTable('deliveries')
    .set((eb) => ({
      lease_owner: p.owner,
      lease_expires_at: p.leaseExpiresAt,
      attempt_count: eb('attempt_count', '+', 1),
      updated_at: p.now,
    }))
    .where(sql<boolean>`delivery_id in ${sqliteListRows(p.ids)}`),
);
