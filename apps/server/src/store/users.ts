import { type Kysely, sql } from 'kysely';
import { newId } from '../domain/ids.js';
import type { AccountRow, Database, MembershipSource, UserRow } from './schema.js';

/** People, the accounts they may act for, and their API tokens. */

/**
 * The user a GitHub login or installation names. A user is their numeric GitHub id: the
 * id is the only key, and the login is a display name, updated to what GitHub says now. GitHub
 * frees a login when its holder renames and may give it to someone else, so a row is never found
 * or re-bound by login when the id is known: the newcomer gets a row of their own, and the row
 * that still shows the login (its holder renamed) has it marked stale until they log in again.
 *
 * Without an id (an operator's `zekt token create --login`), the login names whoever shows it now,
 * or a new user known only by it — who stays a separate user from any GitHub id that logs in
 * with that login later.
 */
export async function upsertUser(
  db: Kysely<Database>,
  user: { login: string; githubId?: number | null },
  now: number,
): Promise<UserRow> {
  if (user.githubId == null) {
    return (await getUserByLogin(db, user.login)) ?? (await insertUser(db, user.login, null, now));
  }
  const existing = await db
    .selectFrom('users')
    .selectAll()
    .where('github_id', '=', user.githubId)
    .executeTakeFirst();
  const holder = await getUserByLogin(db, user.login);
  if (holder && holder.user_id !== existing?.user_id) {
    // GitHub says this login is someone else's now: its former holder renamed.
    await db
      .updateTable('users')
      .set({ login: staleLogin(holder), updated_at: now })
      .where('user_id', '=', holder.user_id)
      .execute();
  }
  if (!existing) return insertUser(db, user.login, user.githubId, now);
  if (existing.login !== user.login) {
    await db
      .updateTable('users')
      .set({ login: user.login, updated_at: now })
      .where('user_id', '=', existing.user_id)
      .execute();
  }
  return { ...existing, login: user.login };
}

/** Never a GitHub login (`~` is not allowed in one), unique by the user id. */
function staleLogin(user: UserRow): string {
  return `${user.login.split('~')[0]}~${user.user_id}`;
}

async function insertUser(
  db: Kysely<Database>,
  login: string,
  githubId: number | null,
  now: number,
): Promise<UserRow> {
  const row: UserRow = {
    user_id: newId('usr', now),
    github_id: githubId,
    login,
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
  token: { userId: string; tokenHash: string; name: string; expiresAt?: number | null },
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
      expires_at: token.expiresAt ?? null,
    })
    .execute();
  return tokenId;
}

/**
 * The user an unrevoked token belongs to, with the token's id (the audit trail names it) and its
 * expiry (the caller refuses an expired token, saying so).
 */
export async function findUserByTokenHash(
  db: Kysely<Database>,
  tokenHash: string,
): Promise<(UserRow & { token_id: string; expires_at: number | null }) | undefined> {
  return db
    .selectFrom('api_tokens')
    .innerJoin('users', 'users.user_id', 'api_tokens.user_id')
    .selectAll('users')
    .select(['api_tokens.token_id', 'api_tokens.expires_at'])
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
        ).map((row) => row.account_id);
  let stale = db
    .deleteFrom('memberships')
    .where('user_id', '=', userId)
    .where('source', 'in', ['installer', 'oauth']);
  if (known.length > 0) stale = stale.where('account_id', 'not in', known);
  await stale.execute();
  for (const accountId of known) await addMembership(db, userId, accountId, 'oauth', now);
}
