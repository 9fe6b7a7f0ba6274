import type { Kysely } from 'kysely';
import type { Enforcement, SchemaInForce } from '../domain/message-schema.js';
import { hotQuery } from './engine/compiled-query.js';
import type { KeysetPage } from './page.js';
import type { Database, ServiceSchemaRow } from './schema.js';

/** Versions of services' message schemas, and the version and enforcement in force on each service. */

export interface NewSchemaVersion {
  serviceId: string;
  accountId: number;
  version: number;
  schemaJson: string;
  exampleJson: string | null;
  requiresMessage: boolean;
  compatibilityJson: string;
  createdBy: string;
}

/**
 * Writes a new version and puts it in force with `enforcement`. The caller reads the version in
 * force in the same transaction: the primary key (service, version) refuses a second writer of the
 * same number, so two saves at once make two versions or one error, never one lost.
 */
export async function insertSchemaVersion(
  db: Kysely<Database>,
  version: NewSchemaVersion,
  enforcement: Enforcement,
  now: number,
): Promise<void> {
  await db
    .insertInto('service_schemas')
    .values({
      service_id: version.serviceId,
      version: version.version,
      account_id: version.accountId,
      schema: version.schemaJson,
      schema_bytes: Buffer.byteLength(version.schemaJson, 'utf8'),
      example: version.exampleJson,
      requires_message: version.requiresMessage,
      compatibility: version.compatibilityJson,
      created_by: version.createdBy,
      created_at: now,
    })
    .execute();
  await db
    .updateTable('services')
    .set({
      schema_version: version.version,
      schema_enforcement: enforcement,
      schema_requires_message: version.requiresMessage,
      updated_at: now,
    })
    .where('service_id', '=', version.serviceId)
    .execute();
}

export async function setSchemaEnforcement(
  db: Kysely<Database>,
  serviceId: string,
  enforcement: Enforcement,
  now: number,
): Promise<void> {
  await db
    .updateTable('services')
    .set({ schema_enforcement: enforcement, updated_at: now })
    .where('service_id', '=', serviceId)
    .execute();
}

export function getSchemaVersion(
  db: Kysely<Database>,
  serviceId: string,
  version: number,
): Promise<ServiceSchemaRow | undefined> {
  return db
    .selectFrom('service_schemas')
    .selectAll()
    .where('service_id', '=', serviceId)
    .where('version', '=', version)
    .executeTakeFirst();
}

/** A service's versions, newest first (keyset on the version number). */
export function listSchemaVersions(
  db: Kysely<Database>,
  serviceId: string,
  page: KeysetPage,
): Promise<ServiceSchemaRow[]> {
  let query = db.selectFrom('service_schemas').selectAll().where('service_id', '=', serviceId);
  const [after] = page.after ?? [];
  if (after !== undefined) query = query.where('version', '<', Number(after));
  return query.orderBy('version', 'desc').limit(page.limit).execute();
}

/**
 * The schemas a message of this workflow is checked against: its services' versions in force
 * whose enforcement is not `off`. Read for every message, so compiled once (hotQuery).
 */
export async function schemasInForce(
  db: Kysely<Database>,
  repositoryId: number,
  workflowPath: string,
): Promise<SchemaInForce[]> {
  const { rows } = await schemasInForceQuery.execute(db, { repositoryId, workflowPath });
  return rows.map((row) => ({
    serviceId: row.service_id,
    slug: row.slug,
    version: row.schema_version as number,
    enforcement: row.schema_enforcement,
  }));
}

const schemasInForceQuery = hotQuery((db, p: { repositoryId: number; workflowPath: string }) =>
  db
    .selectFrom('services')
    .select(['service_id', 'slug', 'schema_version', 'schema_enforcement'])
    .where('repository_id', '=', p.repositoryId)
    .where('workflow_path', '=', p.workflowPath)
    .where('schema_version', 'is not', null)
    .where('schema_enforcement', '!=', 'off'),
);

/** The schema text of one version, for a checking thread that has not compiled it yet. */
export async function loadSchemaText(
  db: Kysely<Database>,
  serviceId: string,
  version: number,
): Promise<string> {
  const row = await db
    .selectFrom('service_schemas')
    .select('schema')
    .where('service_id', '=', serviceId)
    .where('version', '=', version)
    .executeTakeFirst();
  if (row === undefined) throw new Error(`schema version ${version} of ${serviceId} is missing`);
  return row.schema;
}
