import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { SqlDialect } from '../engine/dialect.js';
import type { Database } from '../schema.js';
import { type ClaimOptions, dueAndFree, scanSize } from './claim-options.js';
import { NO_ACCOUNT, padded } from './padding.js';

/** What decides a claim's SQL: its dialect and the (padded) lengths of its lists. */
export interface ClaimShape {
  dialect: SqlDialect;
  skipped: number;
  /** How many installations' in-flight counts are bound; null: no per-installation cap. */
  capped: number | null;
}

/** A claim's shape, the key its compiled SQL is kept under, and its parameters. */
export function claimOf(
  dialect: SqlDialect,
  options: ClaimOptions,
): { shape: ClaimShape; key: string; params: Record<string, unknown> } {
  // The lists are padded to a power of two with an account id no installation has, so the claim is
  // compiled once per dialect and pair of sizes, not once per length (an `in` list and a `case`
  // bind each element).
  const skip = padded(options.skipAccounts ?? [], NO_ACCOUNT);
  const inFlight = padded([...(options.inFlight ?? new Map<number, number>())], [NO_ACCOUNT, 0] as const);
  const capped = options.perInstallation === undefined ? null : inFlight.length;
  const params: Record<string, unknown> = {
    now: options.now,
    limit: options.limit,
    scan: scanSize(options),
    owner: options.owner,
    leaseExpiresAt: options.now + options.leaseMs,
  };
  skip.forEach((account, i) => {
    params[`skip${i}`] = account;
  });
  if (capped !== null) {
    params.cap = options.perInstallation;
    inFlight.forEach(([account, used], i) => {
      params[`account${i}`] = account;
      params[`used${i}`] = used;
    });
  }
  return {
    shape: { dialect, skipped: skip.length, capped },
    key: `${dialect}:${skip.length}:${capped ?? 'uncapped'}`,
    params,
  };
}

/**
 * PostgreSQL's claim, one UPDATE … RETURNING built for hotQuery (every value a named parameter of
 * `p`): atomic among workers without a transaction around it.
 */
export function buildClaim(db: Kysely<Database>, p: Record<string, unknown>, shape: ClaimShape) {
  const { skipped, capped } = shape;
  const now = p.now as number;
  let oldest = dueAndFree(
    db.selectFrom('deliveries').select(['delivery_id', 'consumer_account_id', 'next_attempt_at']),
    now,
  )
    .orderBy('next_attempt_at')
    .limit(p.scan as number);
  if (skipped > 0) {
    const accounts = Array.from({ length: skipped }, (_, i) => p[`skip${i}`] as number);
    oldest = oldest.where('consumer_account_id', 'not in', accounts);
  }
  let chosen: SelectQueryBuilder<Database, 'deliveries', { delivery_id: string }>;
  if (capped === null) {
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
      (capped === 0
        ? sql<number>`0`
        : sql<number>`case due.consumer_account_id ${sql.join(
            Array.from(
              { length: capped },
              (_, i) => sql`when ${p[`account${i}`]} then cast(${p[`used${i}`]} as integer)`,
            ),
            sql` `,
          )} else 0 end`
      ).as('used'),
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
