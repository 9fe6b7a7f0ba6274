import type { Kysely } from 'kysely';
import type { MigrationContext } from '../engine/dialect.js';

/**
 * Console sessions: a GitHub OAuth login creates one. Only the SHA-256 of the session's cookie
 * value is stored, like API tokens, so a copy of the database cannot be used to log in.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('sessions')
    .addColumn('session_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id'))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_expires').on('sessions').column('expires_at').execute();
  await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();
}
