import type { Kysely } from 'kysely';
import { hotQueryFamily } from '../engine/compiled-query.js';
import type { SqlDialect } from '../engine/dialect.js';
import type { Database, DeliveryRow } from '../schema.js';
import { buildClaim, claimOf } from './claim-on-postgres.js';
import { claimIdsOnSqlite } from './claim-on-sqlite.js';
import type { ClaimOptions } from './claim-options.js';

/**
 * Claims up to `limit` deliveries that are due (pending, `next_attempt_at` reached, no live
 * lease) and counts the attempt they are claimed for, oldest due first, and at most
 * `perInstallation - inFlight` of one installation's.
 *
 * One statement serves every installation with free slots, so a worker whose calls end one by one
 * across many installations claims them back in one round trip rather than one claim per free slot
 * (the dispatcher claimed one row per statement while every installation was one call
 * short of its cap, and a worker could not refill 64 slots of 250 ms calls in time on
 * PostgreSQL). The oldest due deliveries are read first (`scan` of them, skipped installations
 * left out by the index scan), ranked within their installation, and only the ones within their
 * installation's free slots are locked: on PostgreSQL `FOR UPDATE SKIP LOCKED` at that level
 * rechecks that each is still due and unleased, so two workers never take the same delivery and
 * neither waits for the other.
 */
export async function claimDueDeliveries(
  db: Kysely<Database>,
  dialect: SqlDialect,
  options: ClaimOptions,
): Promise<DeliveryRow[]> {
  if (dialect !== 'postgres') {
    const claim = async (trx: Kysely<Database>) => {
      const { claimed } = await claimIdsOnSqlite(trx, options);
      return claimed.length === 0 ? [] : selectDeliveries(trx, claimed);
    };
    return db.isTransaction ? claim(db) : db.transaction().execute(claim);
  }
  const claim = claimOf(dialect, options);
  return (await claimQuery(claim).execute(db, claim.params)).rows as DeliveryRow[];
}

function selectDeliveries(db: Kysely<Database>, ids: readonly string[]): Promise<DeliveryRow[]> {
  return db
    .selectFrom('deliveries')
    .selectAll()
    .where('delivery_id', 'in', [...ids])
    .orderBy('next_attempt_at')
    .execute();
}

const claimQuery = hotQueryFamily(
  (claim: ReturnType<typeof claimOf>) => claim.key,
  (claim) => (db, p: Record<string, unknown>) => buildClaim(db, p, claim.shape),
);
