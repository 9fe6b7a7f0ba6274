import type { Kysely } from 'kysely';
import { newId } from '../domain/ids.js';
import type { SchemaCheck, SchemaInForce } from '../domain/message-schema.js';
import type { KeysetPage } from './page.js';
import type { Database, SchemaViolationRow, SchemaViolationsTable } from './schema.js';

/** Messages (or missing ones) that broke a schema in force, recorded with their run for the provider. */

interface RunKey {
  repositoryId: number;
  runId: number;
  runAttempt: number;
}

/**
 * Records the warn-mode violations of a run's message, replacing those of a message it replaces
 * (the run's last message is the one delivered).
 */
export async function recordMessageViolations(
  db: Kysely<Database>,
  run: RunKey & { accountId: number },
  violations: SchemaCheck[],
  now: number,
): Promise<void> {
  await db
    .deleteFrom('schema_violations')
    .where('repository_id', '=', run.repositoryId)
    .where('run_id', '=', run.runId)
    .where('run_attempt', '=', run.runAttempt)
    .where('kind', '=', 'invalid_message')
    .execute();
  if (violations.length === 0) return;
  await db
    .insertInto('schema_violations')
    .values(
      violations.map((check) =>
        row(
          run,
          check,
          {
            kind: 'invalid_message',
            outcome: 'accepted',
            errors: check.errors,
            errorCount: check.errorCount,
          },
          now,
        ),
      ),
    )
    .execute();
}

/** Records a run that sent no message while these schemas required one. */
export async function recordMissingMessage(
  db: Kysely<Database>,
  run: RunKey & { accountId: number },
  schemas: SchemaInForce[],
  outcome: 'accepted' | 'blocked',
  problem: { pointer: string; message: string },
  now: number,
): Promise<void> {
  if (schemas.length === 0) return;
  await db
    .insertInto('schema_violations')
    .values(
      schemas.map((schema) =>
        row(run, schema, { kind: 'missing_message', outcome, errors: [problem], errorCount: 1 }, now),
      ),
    )
    .execute();
}

function row(
  run: RunKey & { accountId: number },
  schema: SchemaInForce,
  what: {
    kind: SchemaViolationsTable['kind'];
    outcome: SchemaViolationsTable['outcome'];
    errors: Array<{ pointer: string; message: string }>;
    errorCount: number;
  },
  now: number,
): SchemaViolationsTable {
  return {
    violation_id: newId('scv', now),
    account_id: run.accountId,
    service_id: schema.serviceId,
    schema_version: schema.version,
    enforcement: schema.enforcement,
    kind: what.kind,
    outcome: what.outcome,
    repository_id: run.repositoryId,
    run_id: run.runId,
    run_attempt: run.runAttempt,
    errors: JSON.stringify(what.errors),
    error_count: what.errorCount,
    created_at: now,
  };
}

/** Violations of these accounts' services, newest first (keyset on the violation id, time-ordered). */
export function listViolations(
  db: Kysely<Database>,
  accountIds: number[],
  filter: { serviceId?: string | undefined; since?: number | undefined },
  page: KeysetPage,
): Promise<SchemaViolationRow[]> {
  if (accountIds.length === 0) return Promise.resolve([]);
  let query = db.selectFrom('schema_violations').selectAll().where('account_id', 'in', accountIds);
  if (filter.serviceId !== undefined) query = query.where('service_id', '=', filter.serviceId);
  if (filter.since !== undefined) query = query.where('created_at', '>=', filter.since);
  const [after] = page.after ?? [];
  if (after !== undefined) query = query.where('violation_id', '<', after);
  return query.orderBy('violation_id', 'desc').limit(page.limit).execute();
}
