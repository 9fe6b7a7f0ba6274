import type { Kysely } from 'kysely';
import type { MigrationContext } from '../engine/dialect.js';

/**
 * API tokens created in the API and the console carry an expiry (`expires_at`, null for the
 * operator's `zekt token create`, which never expires); a person lists their own tokens, newest
 * first, by `(user_id, token_id)`.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema.alterTable('api_tokens').addColumn('expires_at', bigint).execute();
  await db.schema.createIndex('api_tokens_user').on('api_tokens').columns(['user_id', 'token_id']).execute();
}
