import { type Kysely, sql } from 'kysely';
import { newId } from '../domain/ids.js';
import type { AccountRow, Database, MembershipSource, UserRow } from './schema.js';

/** People, the accounts they may act for, and their API tokens. */

export async function upsertUser(
  db: Kysely<Database>,
  user: { login: string; githubId?: number | null },
  now: number,
): Promise<UserRow> {
  const byGithubId =
    user.githubId == null
      ? undefined
      : await db.selectFrom('users').selectAll().where('github_id', '=', user.githubId).executeTakeFirst();
  const existing =
    byGithubId ??
    (await db
      .selectFrom('users')
      .selectAll()
      .where(sql<string>`lower(login)`, '=', user.login.toLowerCase())
      .executeTakeFirst());
  if (existing) {
    const githubId = user.githubId ?? existing.github_id;
    if (existing.login !== user.login || existing.github_id !== githubId) {
      await db
        .updateTable('users')
        .set({ login: user.login, github_id: githubId, updated_at: now })
        .where('user_id', '=', existing.user_id)
        .execute();
    }
    return { ...existing, login: user.login, github_id: githubId };
  }
  const row: UserRow = {
    user_id: newId('usr', now),
    github_id: user.githubId ?? null,
    login: user.login,
    created_at: now,
    updated_at: now,
  };
  await db.insertInto('users').values(row).execute();
  return row;
}

export function getUserByLogin(db: Kysely<Database>, login: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(login)`, '=', login.toLowerCase())
    .executeTakeFirst();
}

export async function addMembership(
  db: Kysely<Database>,
  userId: string,
  accountId: number,
  source: MembershipSource,
  now: number,
): Promise<void> {
  await db
    .insertInto('memberships')
    .values({ user_id: userId, account_id: accountId, source, created_at: now })
    .onConflict((oc) => oc.columns(['user_id', 'account_id']).doNothing())
    .execute();
}

/** Accounts a user may act for; uninstalled accounts are kept for history but no longer listed. */
export function listMemberAccounts(db: Kysely<Database>, userId: string): Promise<AccountRow[]> {
  return db
    .selectFrom('memberships')
    .innerJoin('accounts', 'accounts.account_id', 'memberships.account_id')
    .selectAll('accounts')
    .where('memberships.user_id', '=', userId)
    .orderBy('accounts.login')
    .execute();
}

export async function createApiToken(
  db: Kysely<Database>,
  token: { userId: string; tokenHash: string; name: string },
  now: number,
): Promise<string> {
  const tokenId = newId('tok', now);
  await db
    .insertInto('api_tokens')
    .values({
      token_id: tokenId,
      user_id: token.userId,
      token_hash: token.tokenHash,
      name: token.name,
      created_at: now,
      last_used_at: null,
      revoked_at: null,
    })
    .execute();
  return tokenId;
}

export async function findUserByTokenHash(
  db: Kysely<Database>,
  tokenHash: string,
): Promise<UserRow | undefined> {
  return db
    .selectFrom('api_tokens')
    .innerJoin('users', 'users.user_id', 'api_tokens.user_id')
    .selectAll('users')
    .where('api_tokens.token_hash', '=', tokenHash)
    .where('api_tokens.revoked_at', 'is', null)
    .executeTakeFirst();
}

/**
 * Makes the user's memberships that come from GitHub (as the installer, or from an earlier login)
 * exactly the known accounts among `accountIds` — what GitHub listed in `GET /user/installations`
 * at this login: access gained on GitHub is gained here, access lost on GitHub (left the
 * organisation, removed from the installation) is lost here. An operator's membership stays.
 */
export async function refreshGitHubMemberships(
  db: Kysely<Database>,
  userId: string,
  accountIds: number[],
  now: number,
): Promise<void> {
  const known =
    accountIds.length === 0
      ? []
      : (
          await db
            .selectFrom('accounts')
            .select('account_id')
            .where('account_id', 'in', accountIds)
            .where('uninstalled_at', 'is', null)
            .execute()
        ).map((row) => Number(row.account_id));
  let stale = db
    .deleteFrom('memberships')
    .where('user_id', '=', userId)
    .where('source', 'in', ['installer', 'oauth']);
  if (known.length > 0) stale = stale.where('account_id', 'not in', known);
  await stale.execute();
  for (const accountId of known) await addMembership(db, userId, accountId, 'oauth', now);
}
