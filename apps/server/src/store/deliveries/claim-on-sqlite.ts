import type { Kysely } from 'kysely';
import { hotQueryFamily } from '../engine/compiled-query.js';
import type { Database } from '../schema.js';
import { type ClaimOptions, type ClaimOutcome, dueAndFree, scanSize } from './claim-options.js';
import { NO_ACCOUNT, NO_DELIVERY, padded } from './padding.js';
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
  const skip = padded(options.skipAccounts ?? [], NO_ACCOUNT);
  const due = dueQuery(skip.length);
  const scan = scanSize(options);
  const params: Record<string, unknown> = { now: options.now, scan };
  skip.forEach((account, i) => {
    params[`skip${i}`] = account;
  });
  const scanned = (await due.execute(db, params)).rows;
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
  const ids = padded(chosen, NO_DELIVERY);
  const lease = leaseQuery(ids.length);
  const values: Record<string, unknown> = {
    owner: options.owner,
    leaseExpiresAt: options.now + options.leaseMs,
    now: options.now,
  };
  ids.forEach((id, i) => {
    values[`id${i}`] = id;
  });
  await lease.execute(db, values);
  return outcome;
}

const dueQuery = hotQueryFamily(
  (skipped: number) => skipped,
  (skipped) => (db, p: Record<string, unknown>) => {
    let due = dueAndFree(
      db.selectFrom('deliveries').select(['delivery_id', 'consumer_account_id']),
      p.now as number,
    );
    if (skipped > 0) {
      const accounts = Array.from({ length: skipped }, (_, i) => p[`skip${i}`] as number);
      due = due.where('consumer_account_id', 'not in', accounts);
    }
    return due.orderBy('next_attempt_at').limit(p.scan as number);
  },
);

const leaseQuery = hotQueryFamily(
  (size: number) => size,
  (size) => (db, p: Record<string, unknown>) =>
    db
      .updateTable('deliveries')
      .set((eb) => ({
        lease_owner: p.owner as string,
        lease_expires_at: p.leaseExpiresAt as number,
        attempt_count: eb('attempt_count', '+', 1),
        updated_at: p.now as number,
      }))
      .where(
        'delivery_id',
        'in',
        Array.from({ length: size }, (_, i) => p[`id${i}`] as string),
      ),
);
