import type { Kysely } from 'kysely';
import { hotQuery } from './engine/compiled-query.js';
import type { KeysetPage } from './page.js';
import type { Database, WorkflowRow } from './schema.js';

/** Workflow files of provider repositories: seen in a run, or declared when whitelisted. */

/**
 * How stale a workflow's `last_seen_at` may get before a run writes it again. Every run of a
 * workflow would otherwise update the same row, and on PostgreSQL each webhook's transaction would
 * hold that row's lock until its COMMIT, so concurrent webhooks of one workflow committed one after
 * another (the upsert averaged 25 ms under 32 concurrent webhooks). A read takes no lock:
 * the row is written only when it is missing, renamed, or older than this.
 */
export const WORKFLOW_SEEN_PRECISION_MS = 60_000;

/**
 * Records that a run of the workflow was seen; `last_seen_at` is kept to within a minute. Returns
 * the row as read when it needed no write (routing can use it instead of reading it again), or
 * undefined when it was written. `read` is the row as this transaction already read it (undefined
 * inside it: never seen), to spare reading it again.
 */
export async function recordWorkflowSeen(
  db: Kysely<Database>,
  workflow: { repositoryId: number; path: string; name: string },
  now: number,
  read?: { row: WorkflowRow | undefined },
): Promise<WorkflowRow | undefined> {
  const { repositoryId, path, name } = workflow;
  const seen = read ? read.row : await getWorkflow(db, repositoryId, path);
  if (
    seen !== undefined &&
    seen.name === name &&
    seen.first_seen_at !== null &&
    seen.last_seen_at !== null &&
    now - seen.last_seen_at < WORKFLOW_SEEN_PRECISION_MS
  ) {
    return seen;
  }
  await recordWorkflowSeenQuery.execute(db, { repositoryId, path, name, now });
  return undefined;
}

const recordWorkflowSeenQuery = hotQuery(
  (db, p: { repositoryId: number; path: string; name: string; now: number }) =>
    db
      .insertInto('workflows')
      .values({
        repository_id: p.repositoryId,
        path: p.path,
        name: p.name,
        whitelisted: false,
        blocked_count: 0,
        first_seen_at: p.now,
        last_seen_at: p.now,
        created_at: p.now,
        updated_at: p.now,
      })
      .onConflict((oc) =>
        oc.columns(['repository_id', 'path']).doUpdateSet((eb) => ({
          name: p.name,
          first_seen_at: eb.fn.coalesce('workflows.first_seen_at', eb.val(p.now)),
          last_seen_at: p.now,
          updated_at: p.now,
        })),
      ),
);

export async function setWhitelisted(
  db: Kysely<Database>,
  repositoryId: number,
  path: string,
  whitelisted: boolean,
  now: number,
): Promise<void> {
  await db
    .insertInto('workflows')
    .values({
      repository_id: repositoryId,
      path,
      name: null,
      whitelisted,
      blocked_count: 0,
      first_seen_at: null,
      last_seen_at: null,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.columns(['repository_id', 'path']).doUpdateSet({ whitelisted, updated_at: now }))
    .execute();
}

export async function getWorkflow(
  db: Kysely<Database>,
  repositoryId: number,
  path: string,
): Promise<WorkflowRow | undefined> {
  return (await getWorkflowQuery.execute(db, { repositoryId, path })).rows[0];
}

const getWorkflowQuery = hotQuery((db, p: { repositoryId: number; path: string }) =>
  db
    .selectFrom('workflows')
    .selectAll()
    .where('repository_id', '=', p.repositoryId)
    .where('path', '=', p.path),
);

export function listWorkflows(
  db: Kysely<Database>,
  repositoryId: number,
  page: KeysetPage = { limit: 1_000 },
): Promise<WorkflowRow[]> {
  let query = db.selectFrom('workflows').selectAll().where('repository_id', '=', repositoryId);
  if (page.after) query = query.where('path', '>', page.after[0]!);
  return query.orderBy('path').limit(page.limit).execute();
}

export async function countBlocked(
  db: Kysely<Database>,
  repositoryId: number,
  path: string,
  now: number,
): Promise<void> {
  await db
    .updateTable('workflows')
    .set((eb) => ({ blocked_count: eb('blocked_count', '+', 1), updated_at: now }))
    .where('repository_id', '=', repositoryId)
    .where('path', '=', path)
    .execute();
}

/** Workflows with the most blocked runs across an account's repositories. */
export function topBlockedWorkflows(db: Kysely<Database>, accountId: number, limit: number) {
  return db
    .selectFrom('workflows')
    .innerJoin('repositories', 'repositories.repository_id', 'workflows.repository_id')
    .select(['repositories.full_name', 'workflows.path', 'workflows.name', 'workflows.blocked_count'])
    .where('repositories.account_id', '=', accountId)
    .where('workflows.blocked_count', '>', 0)
    .orderBy('workflows.blocked_count', 'desc')
    .orderBy('workflows.path')
    .limit(limit)
    .execute();
}
