import type { Kysely } from 'kysely';
import type { KeysetPage } from './page.js';
import type { ApiTokensTable, Database } from './schema.js';

/** A person's API tokens as they list them: never the hash. */
export type ApiTokenRow = Pick<ApiTokensTable, 'token_id' | 'name' | 'created_at' | 'expires_at'>;

/** The unrevoked tokens of one user (expired ones included, marked by the caller), newest first. */
export function listUserTokens(
  db: Kysely<Database>,
  userId: string,
  page: KeysetPage,
): Promise<ApiTokenRow[]> {
  let query = db
    .selectFrom('api_tokens')
    .select(['token_id', 'name', 'created_at', 'expires_at'])
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .orderBy('token_id', 'desc')
    .limit(page.limit);
  if (page.after) query = query.where('token_id', '<', page.after[0]!);
  return query.execute();
}

/**
 * Revokes one of the user's own unrevoked tokens; the token as it was, or undefined when the user
 * has no such token (another user's token is not found either).
 */
export async function revokeUserToken(
  db: Kysely<Database>,
  userId: string,
  tokenId: string,
  now: number,
): Promise<ApiTokenRow | undefined> {
  const token = await db
    .selectFrom('api_tokens')
    .select(['token_id', 'name', 'created_at', 'expires_at'])
    .where('token_id', '=', tokenId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!token) return undefined;
  const revoked = await db
    .updateTable('api_tokens')
    .set({ revoked_at: now })
    .where('token_id', '=', tokenId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return revoked.numUpdatedRows > 0n ? token : undefined;
}
