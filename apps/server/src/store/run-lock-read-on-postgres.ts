import { CompiledQuery } from 'kysely';
import { sharedStatement } from './engine/shared-statements.js';
import type { RepositoryRow, WorkflowRow } from './schema.js';

type Params = { repositoryId: number; path: string; runKey: string };

/**
 * Completion webhooks' first statement on PostgreSQL, for any number of them (a shared statement:
 * engine/shared-statements.ts): each run's advisory lock, then its repository and the run's
 * workflow (undefined when never seen). The locks are taken in the order of their keys, whatever
 * the order of the webhooks, so two groups holding some of the same runs cannot deadlock; a run
 * twice in one group is locked twice by one transaction, which PostgreSQL allows.
 *
 * Only rows the run's lock does not guard may be read here: the statement's snapshot is taken
 * before the locks are waited for (accounts.ts, `getRepositoryAndWorkflowLockingRun`). Rows come
 * back as JSON, whose numbers and booleans are what the driver's parsers give (engine/postgres.ts).
 *
 * Each row is read by its key in a subquery of its own, never joined: the planner takes the
 * recordset for 100 rows, and joined to a table it deems small (a fresh database, or one never
 * analyzed) it reads the table whole; the statement is prepared by name, so that generic plan
 * would stay as the tables grow (test/postgres/query-plans.test.ts).
 */
export const readLockingRunsOnPostgres = sharedStatement(
  async (
    db,
    rows: readonly Params[],
  ): Promise<Array<{ repository: RepositoryRow; workflow: WorkflowRow | undefined } | undefined>> => {
    const input = JSON.stringify(
      rows.map((p, i) => ({ i, repository_id: p.repositoryId, path: p.path, run_key: p.runKey })),
    );
    const result = await db.executeQuery<{
      i: number;
      repository: RepositoryRow | null;
      workflow: WorkflowRow | null;
    }>(CompiledQuery.raw(LOCKING_RUNS, [input]));
    const byRow = new Map(result.rows.map((row) => [row.i, row]));
    return rows.map((_, i) => {
      const row = byRow.get(i);
      if (!row?.repository) return undefined;
      return { repository: row.repository, workflow: row.workflow ?? undefined };
    });
  },
);

const LOCKING_RUNS = `with input as (
  select * from json_to_recordset($1::json) as r(i integer, repository_id bigint, path text, run_key text)
), locked as materialized (
  select ordered.i, pg_advisory_xact_lock(hashtextextended(ordered.run_key, 0)) as locked
  from (select i, run_key from input order by run_key, i offset 0) ordered
)
select input.i,
  (select to_json(r) from repositories r where r.repository_id = input.repository_id) as repository,
  (select to_json(w) from workflows w where w.repository_id = input.repository_id and w.path = input.path)
    as workflow
from input
join locked on locked.i = input.i`;
