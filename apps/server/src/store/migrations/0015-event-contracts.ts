import type { Kysely } from 'kysely';
import type { MigrationContext } from '../engine/dialect.js';

/**
 * Event contracts: a service's message schema, in numbered versions that never change (a new
 * schema is a new version), the version and enforcement in force on the service (routing reads
 * them with the subscriptions), the versions a message was checked against and the one each
 * delivery carries, and the violations recorded for the provider.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  const flag = dialect === 'postgres' ? 'boolean' : 'integer';
  const no = dialect === 'postgres' ? false : 0;

  await db.schema.alterTable('services').addColumn('schema_version', 'integer').execute();
  await db.schema
    .alterTable('services')
    .addColumn('schema_enforcement', 'text', (c) => c.notNull().defaultTo('off'))
    .execute();
  await db.schema
    .alterTable('services')
    .addColumn('schema_requires_message', flag, (c) => c.notNull().defaultTo(no))
    .execute();

  await db.schema
    .createTable('service_schemas')
    .addColumn('service_id', 'text', (c) => c.notNull().references('services.service_id'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('account_id', bigint, (c) => c.notNull())
    .addColumn('schema', 'text', (c) => c.notNull())
    .addColumn('schema_bytes', 'integer', (c) => c.notNull())
    .addColumn('example', 'text')
    .addColumn('requires_message', flag, (c) => c.notNull())
    .addColumn('compatibility', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('service_schemas_pk', ['service_id', 'version'])
    .execute();

  await db.schema.alterTable('messages').addColumn('schema_versions', 'text').execute();
  await db.schema.alterTable('deliveries').addColumn('schema_version', 'integer').execute();

  await db.schema
    .createTable('schema_violations')
    .addColumn('violation_id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', bigint, (c) => c.notNull())
    .addColumn('service_id', 'text', (c) => c.notNull())
    .addColumn('schema_version', 'integer', (c) => c.notNull())
    .addColumn('enforcement', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('repository_id', bigint, (c) => c.notNull())
    .addColumn('run_id', bigint, (c) => c.notNull())
    .addColumn('run_attempt', 'integer', (c) => c.notNull())
    .addColumn('errors', 'text', (c) => c.notNull())
    .addColumn('error_count', 'integer', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('schema_violations_account')
    .on('schema_violations')
    .columns(['account_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('schema_violations_run')
    .on('schema_violations')
    .columns(['repository_id', 'run_id', 'run_attempt'])
    .execute();
}
