import { type Kysely, sql } from 'kysely';
import {
  CLAIMED_COLUMNS,
  type ClaimedDelivery,
  type ContextRow,
  claimedColumns,
  type DispatchContext,
  toDispatchContext,
  withContextColumns,
} from '../dispatch-context.js';
import { sqliteList, sqliteListRows } from '../engine/bound-lists.js';
import { hotQuery } from '../engine/compiled-query.js';
import type { SqlDialect } from '../engine/dialect.js';
import type { Database, DeliveryRow } from '../schema.js';
import { buildClaim, postgresClaimOf } from './claim-on-postgres.js';
import { claimIdsOnSqlite } from './claim-on-sqlite.js';
import type { ClaimOptions, ClaimOutcome } from './claim-options.js';

/**
 * The dispatcher's claim: up to `limit` deliveries that are due (pending, `next_attempt_at`
 * reached, no live lease), oldest due first and at most `perInstallation - inFlight` of one
 * installation's, leased to `owner` and counted as an attempt, each with its dispatch context.
 *
 * One statement serves every installation with free slots, so a worker whose calls end one by one
 * across many installations claims them back in one round trip rather than one claim per free slot
 * (the dispatcher claimed one row per statement while every installation was one call short of its
 * cap, and a worker could not refill 64 slots of 250 ms calls in time on PostgreSQL). The oldest
 * due deliveries are read first (`scan` of them, skipped installations left out by the index
 * scan), ranked within their installation, and only the ones within their installation's free
 * slots are locked: on PostgreSQL `FOR UPDATE SKIP LOCKED` at that level rechecks that each is
 * still due and unleased, so two workers never take the same delivery and neither waits for the
 * other.
 *
 * On PostgreSQL the claim and the contexts are one statement (the claim's UPDATE … RETURNING as a
 * data-modifying CTE the context is joined to), atomic without a transaction around it: a dispatch
 * is then two round trips, the claim and the finish, where it was three (the worker spent most of
 * its time writing statements to PostgreSQL's socket). SQLite has no such CTE and no round trips:
 * inside the caller's transaction, the contexts are read in one statement after the claim.
 */
export async function claimWithContext(
  db: Kysely<Database>,
  dialect: SqlDialect,
  options: ClaimOptions,
): Promise<ClaimOutcome<{ row: ClaimedDelivery; context: DispatchContext }>> {
  if (dialect !== 'postgres') {
    const { claimed: ids, ...learned } = await claimIdsOnSqlite(db, options);
    if (ids.length === 0) return { claimed: [], ...learned };
    // The claimed rows and their contexts in one read, of the columns an attempt uses only: every
    // column of a delivery is ~8 µs per row to turn into an object, more than the read itself.
    const read = (await claimedQuery.execute(db, { ids: sqliteList(ids) })).rows as Array<
      ContextRow & ClaimedDelivery
    >;
    const byId = new Map(read.map((r) => [r.delivery_id, r]));
    const claimed = ids.flatMap((id) => {
      const r = byId.get(id);
      return r ? [{ row: claimedColumns(r), context: toDispatchContext(r) }] : [];
    });
    return { claimed, ...learned };
  }
  const { capped, params } = postgresClaimOf(options);
  const query = capped ? cappedClaimQuery : uncappedClaimQuery;
  const rows = (await query.execute(db, params)).rows as Array<ContextRow & DeliveryRow>;
  return {
    claimed: rows.map((r) => ({ row: claimedColumns(r), context: toDispatchContext(r) })),
    // The statement ranks and locks in SQL, so what a claim that took rows left is not known here.
    // One that took none saw every due delivery it may take: it read the oldest due ones of every
    // installation not skipped, each of which has a free slot, so it would have taken one had there
    // been any (rows another worker has locked are being claimed by that worker). Without this,
    // every call that ended woke a claim that found nothing: two statements per delivery under load.
    sawAll: rows.length === 0,
    atCap: [...(options.skipAccounts ?? [])],
  };
}

const claimedQuery = hotQuery((db, p: { ids: string }) =>
  withContextColumns(db.selectFrom('deliveries as d'))
    .select(CLAIMED_COLUMNS.map((column) => `d.${column}` as const))
    .where(sql<boolean>`d.delivery_id in ${sqliteListRows(p.ids)}`),
);

const claimWithContextQuery = (capped: boolean) =>
  hotQuery((db, p: Record<string, unknown>) =>
    withContextColumns(
      db.with('claimed', () => buildClaim(db, p, capped)).selectFrom('claimed as d'),
    ).selectAll('d'),
  );
const cappedClaimQuery = claimWithContextQuery(true);
const uncappedClaimQuery = claimWithContextQuery(false);
