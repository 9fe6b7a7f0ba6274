import { type Kysely, sql } from 'kysely';
import type { MigrationContext } from '../engine/dialect.js';

/**
 * Setup mode: the GitHub App registered from a manifest, sealed with `ZEKT_SECRET` (one row: a
 * deployment has one App), the nonce the setup code is derived from, the browsers that presented
 * the setup code, and the manifest flow's `state` values (hashed, single use).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('app_credentials')
    // One slot, so a second App can never be stored beside the first.
    .addColumn('slot', 'text', (c) => c.primaryKey().check(sql`slot = 'github_app'`))
    .addColumn('sealed', 'text', (c) => c.notNull())
    .addColumn('registered_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('setup_codes')
    .addColumn('slot', 'text', (c) => c.primaryKey())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('setup_sessions')
    .addColumn('session_hash', 'text', (c) => c.primaryKey())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('setup_states')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('session_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .addColumn('used_at', bigint)
    .execute();
}
