import { type Kysely, sql } from 'kysely';
import type { SqlDialect } from './engine/dialect.js';
import type { Database } from './schema.js';

/** What the per-account caps count, and the lock that makes a cap exact. */
export type CappedKind = 'services' | 'workflows' | 'pendingRequests';

export async function countOfAccount(
  db: Kysely<Database>,
  kind: CappedKind,
  accountId: number,
): Promise<number> {
  const count = sql<number>`count(*)`.as('n');
  const row =
    kind === 'services'
      ? await db
          .selectFrom('services')
          .select(count)
          .where('account_id', '=', accountId)
          .executeTakeFirstOrThrow()
      : kind === 'workflows'
        ? await db
            .selectFrom('workflows')
            .innerJoin('repositories', 'repositories.repository_id', 'workflows.repository_id')
            .select(count)
            .where('repositories.account_id', '=', accountId)
            .executeTakeFirstOrThrow()
        : await db
            .selectFrom('subscriptions')
            .select(count)
            .where('consumer_account_id', '=', accountId)
            .where('status', '=', 'requested')
            .executeTakeFirstOrThrow();
  return row.n;
}

/**
 * Holds the account's row until the transaction ends, so two requests of one account cannot both
 * pass a cap's count. SQLite needs nothing: its write transactions already run one at a time.
 */
export async function lockAccount(
  db: Kysely<Database>,
  dialect: SqlDialect,
  accountId: number,
): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`select account_id from accounts where account_id = ${accountId} for update`.execute(db);
}
