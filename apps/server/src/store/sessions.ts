import type { Kysely } from 'kysely';
import type { Database, UserRow } from './schema.js';

/** Console sessions, looked up by the SHA-256 of the cookie value (see security/sessions.ts). */

export async function createSession(
  db: Kysely<Database>,
  session: { sessionHash: string; userId: string; expiresAt: number },
  now: number,
): Promise<void> {
  await db
    .insertInto('sessions')
    .values({
      session_hash: session.sessionHash,
      user_id: session.userId,
      created_at: now,
      expires_at: session.expiresAt,
    })
    .execute();
}

/** The user of a session that has not expired, or undefined. */
export function findSessionUser(
  db: Kysely<Database>,
  sessionHash: string,
  now: number,
): Promise<UserRow | undefined> {
  return db
    .selectFrom('sessions')
    .innerJoin('users', 'users.user_id', 'sessions.user_id')
    .selectAll('users')
    .where('sessions.session_hash', '=', sessionHash)
    .where('sessions.expires_at', '>', now)
    .executeTakeFirst();
}

export async function deleteSession(db: Kysely<Database>, sessionHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('session_hash', '=', sessionHash).execute();
}
