import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { Database } from '../schema.js';
import { type ClaimOptions, dueAndFree, scanSize } from './claim-options.js';

/**
 * PostgreSQL's claim takes its lists (installations skipped, calls in flight per installation) as
 * one array parameter each, so its SQL text is one per variant whatever their lengths: it is
 * compiled and prepared once, and its plan cached, where a list bound element by element made a
 * new text per length.
 */
export interface PostgresClaim {
  /** Whether a per-installation cap applies (the capped variant ranks within installations). */
  capped: boolean;
  params: Record<string, unknown>;
}

export function postgresClaimOf(options: ClaimOptions): PostgresClaim {
  const params: Record<string, unknown> = {
    now: options.now,
    limit: options.limit,
    scan: scanSize(options),
    owner: options.owner,
    leaseExpiresAt: options.now + options.leaseMs,
    skip: [...(options.skipAccounts ?? [])],
  };
  if (options.perInstallation === undefined) return { capped: false, params };
  const inFlight = [...(options.inFlight ?? new Map<number, number>())];
  params.cap = options.perInstallation;
  params.accounts = inFlight.map(([account]) => account);
  params.used = inFlight.map(([, used]) => used);
  return { capped: true, params };
}

/**
 * PostgreSQL's claim, one UPDATE … RETURNING built for hotQuery (every value a named parameter of
 * `p`): atomic among workers without a transaction around it.
 */
export function buildClaim(db: Kysely<Database>, p: Record<string, unknown>, capped: boolean) {
  const now = p.now as number;
  const oldest = dueAndFree(
    db.selectFrom('deliveries').select(['delivery_id', 'consumer_account_id', 'next_attempt_at']),
    now,
  )
    .where(sql<boolean>`consumer_account_id <> all(cast(${p.skip} as bigint[]))`)
    .orderBy('next_attempt_at')
    .limit(p.scan as number);
  let chosen: SelectQueryBuilder<Database, 'deliveries', { delivery_id: string }>;
  if (!capped) {
    chosen = db
      .selectFrom(oldest.as('due'))
      .select('due.delivery_id')
      .orderBy('due.next_attempt_at')
      .limit(p.limit as number) as never;
  } else {
    const ranked = db.selectFrom(oldest.as('due')).select([
      'due.delivery_id',
      'due.next_attempt_at',
      sql<number>`row_number() over (partition by due.consumer_account_id order by due.next_attempt_at, due.delivery_id)`.as(
        'rank',
      ),
      // The worker's calls in flight for the row's installation: its place in `accounts` indexes `used`.
      sql<number>`coalesce((cast(${p.used} as integer[]))[array_position(cast(${p.accounts} as bigint[]), due.consumer_account_id)], 0)`.as(
        'used',
      ),
    ]);
    chosen = db
      .selectFrom(ranked.as('ranked'))
      .select('ranked.delivery_id')
      .where(sql<boolean>`ranked.rank <= cast(${p.cap} as integer) - ranked.used`)
      .orderBy('ranked.next_attempt_at')
      .limit(p.limit as number) as never;
  }
  // The chosen rows are locked at a level of their own, which rechecks that each is still due and
  // unleased once locked (another worker may have claimed it since the snapshot).
  const locked = dueAndFree(db.selectFrom('deliveries').select('delivery_id'), now)
    .where('delivery_id', 'in', chosen)
    .forUpdate()
    .skipLocked();
  return db
    .updateTable('deliveries')
    .set((eb) => ({
      lease_owner: p.owner as string,
      lease_expires_at: p.leaseExpiresAt as number,
      attempt_count: eb('attempt_count', '+', 1),
      updated_at: now,
    }))
    .where('delivery_id', 'in', locked)
    .returningAll();
}
