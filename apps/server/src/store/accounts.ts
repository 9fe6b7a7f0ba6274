import { type Kysely, sql } from 'kysely';
import { hotQuery } from './engine/compiled-query.js';
import type { KeysetPage } from './page.js';
import type { AccountRow, Database, RepositoryRow, WorkflowRow } from './schema.js';

/** Accounts and their repositories, kept in step with `installation*` webhooks. */

export interface InstalledAccount {
  accountId: number;
  login: string;
  type: string;
  installationId: number;
}

export async function upsertInstalledAccount(
  db: Kysely<Database>,
  account: InstalledAccount,
  now: number,
): Promise<void> {
  // A reinstall gets a new installation id; the old one may still be on a stale row of the same account.
  await db
    .updateTable('accounts')
    .set({ installation_id: null, updated_at: now })
    .where('installation_id', '=', account.installationId)
    .where('account_id', '!=', account.accountId)
    .execute();
  await db
    .insertInto('accounts')
    .values({
      account_id: account.accountId,
      login: account.login,
      type: account.type,
      installation_id: account.installationId,
      installed_at: now,
      suspended_at: null,
      uninstalled_at: null,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc.column('account_id').doUpdateSet({
        login: account.login,
        type: account.type,
        installation_id: account.installationId,
        installed_at: now,
        suspended_at: null,
        uninstalled_at: null,
        updated_at: now,
      }),
    )
    .execute();
}

export async function markUninstalled(
  db: Kysely<Database>,
  installationId: number,
  now: number,
): Promise<void> {
  const account = await getAccountByInstallation(db, installationId);
  if (!account) return;
  await db
    .updateTable('accounts')
    .set({ uninstalled_at: now, installation_id: null, updated_at: now })
    .where('account_id', '=', account.account_id)
    .execute();
  await db
    .updateTable('repositories')
    .set({ removed_at: now, updated_at: now })
    .where('account_id', '=', account.account_id)
    .where('removed_at', 'is', null)
    .execute();
}

export async function setSuspended(
  db: Kysely<Database>,
  installationId: number,
  suspended: boolean,
  now: number,
): Promise<void> {
  await db
    .updateTable('accounts')
    .set({ suspended_at: suspended ? now : null, updated_at: now })
    .where('installation_id', '=', installationId)
    .execute();
}

export function getAccountByInstallation(
  db: Kysely<Database>,
  installationId: number,
): Promise<AccountRow | undefined> {
  return db
    .selectFrom('accounts')
    .selectAll()
    .where('installation_id', '=', installationId)
    .executeTakeFirst();
}

export function getAccount(db: Kysely<Database>, accountId: number): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('account_id', '=', accountId).executeTakeFirst();
}

/** GitHub logins are case-insensitive. */
export function getAccountByLogin(db: Kysely<Database>, login: string): Promise<AccountRow | undefined> {
  return db
    .selectFrom('accounts')
    .selectAll()
    .where(sql<string>`lower(login)`, '=', login.toLowerCase())
    .orderBy('updated_at', 'desc')
    .executeTakeFirst();
}

export interface InstalledRepository {
  repositoryId: number;
  fullName: string;
  name: string;
  private: boolean;
}

export async function upsertRepositories(
  db: Kysely<Database>,
  accountId: number,
  repositories: InstalledRepository[],
  now: number,
): Promise<void> {
  for (const repository of repositories) {
    await db
      .insertInto('repositories')
      .values({
        repository_id: repository.repositoryId,
        account_id: accountId,
        full_name: repository.fullName,
        name: repository.name,
        private: repository.private,
        provider_enabled: false,
        completion_enabled: false,
        removed_at: null,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc.column('repository_id').doUpdateSet({
          account_id: accountId,
          full_name: repository.fullName,
          name: repository.name,
          private: repository.private,
          removed_at: null,
          updated_at: now,
        }),
      )
      .execute();
  }
}

export async function markRepositoriesRemoved(
  db: Kysely<Database>,
  accountId: number,
  repositoryIds: number[],
  now: number,
): Promise<void> {
  if (repositoryIds.length === 0) return;
  await db
    .updateTable('repositories')
    .set({ removed_at: now, updated_at: now })
    .where('account_id', '=', accountId)
    .where('repository_id', 'in', repositoryIds)
    .execute();
}

export async function getRepository(
  db: Kysely<Database>,
  repositoryId: number,
): Promise<RepositoryRow | undefined> {
  return (await getRepositoryQuery.execute(db, { repositoryId })).rows[0];
}

const getRepositoryQuery = hotQuery((db, p: { repositoryId: number }) =>
  db.selectFrom('repositories').selectAll().where('repository_id', '=', p.repositoryId),
);

/**
 * The repository, read first by a transaction that stores or joins something of one workflow run
 * (its completion event: ingest/completion-event.ts; its message: ingest/message-intake.ts). On
 * PostgreSQL the same statement takes a transaction-scoped advisory lock on the run, so the two
 * never overlap. They must not: the completion webhook routes in its own transaction, before its
 * event is committed, and each side looks for the other by reading (under READ COMMITTED, neither
 * sees the other's uncommitted row, and a message stored meanwhile would be answered 201 and
 * never delivered). With the lock, whichever comes second starts after the first committed: the
 * event joins the message, or the message finds its run routed (409). SQLite runs one writer
 * at a time and needs no lock. Taking it in the first read costs no round trip.
 */
export async function getRepositoryLockingRun(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  run: { repositoryId: number; runId: number; runAttempt: number },
): Promise<RepositoryRow | undefined> {
  if (dialect === 'sqlite') return getRepository(db, run.repositoryId);
  const row = (
    await getRepositoryLockingRunQuery.execute(db, {
      repositoryId: run.repositoryId,
      runKey: runLockKey(run),
    })
  ).rows[0];
  if (row === undefined) return undefined;
  const { run_locked: _locked, ...repository } = row;
  return repository;
}

const getRepositoryLockingRunQuery = hotQuery((db, p: { repositoryId: number; runKey: string }) =>
  db
    .selectFrom('repositories')
    .selectAll()
    .select(lockingRun(p.runKey))
    .where('repository_id', '=', p.repositoryId),
);

/** The run's advisory lock, taken by the statement that selects it (released at COMMIT). */
const lockingRun = (runKey: string) =>
  sql<unknown>`pg_advisory_xact_lock(hashtextextended(${runKey}, 0))`.as('run_locked');

export const runLockKey = (run: { repositoryId: number; runId: number; runAttempt: number }) =>
  `${run.repositoryId}:${run.runId}:${run.runAttempt}`;

/**
 * A repository and one of its workflows (undefined when never seen), in one statement: a completion
 * webhook's read on SQLite (received-event.ts, `receiveCompletion`; PostgreSQL's takes the run's
 * lock as well and is received-event-on-postgres.ts).
 */
export async function getRepositoryAndWorkflow(
  db: Kysely<Database>,
  repositoryId: number,
  workflowPath: string,
): Promise<{ repository: RepositoryRow; workflow: WorkflowRow | undefined } | undefined> {
  const row = (await repositoryAndWorkflowQuery.execute(db, { repositoryId, path: workflowPath })).rows[0];
  if (row === undefined) return undefined;
  const repository: Record<string, unknown> = {};
  const workflow: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) {
    if (column.startsWith(WORKFLOW_PREFIX)) workflow[column.slice(WORKFLOW_PREFIX.length)] = value;
    else repository[column] = value;
  }
  return {
    repository: repository as RepositoryRow,
    // The left join found no row: every column of the workflow is null, its key too.
    workflow: workflow.repository_id === null ? undefined : (workflow as WorkflowRow),
  };
}

/** The workflow's columns come back beside the repository's under this prefix. */
const WORKFLOW_PREFIX = 'workflow__';
const WORKFLOW_COLUMNS: ReadonlyArray<keyof WorkflowRow> = [
  'repository_id',
  'path',
  'name',
  'whitelisted',
  'blocked_count',
  'first_seen_at',
  'last_seen_at',
  'created_at',
  'updated_at',
];

const selectRepositoryAndWorkflow = (db: Kysely<Database>, p: { repositoryId: number; path: string }) =>
  db
    .selectFrom('repositories')
    .leftJoin('workflows', (join) =>
      join
        .onRef('workflows.repository_id', '=', 'repositories.repository_id')
        .on('workflows.path', '=', p.path),
    )
    .selectAll('repositories')
    .select(WORKFLOW_COLUMNS.map((column) => sql.ref(`workflows.${column}`).as(WORKFLOW_PREFIX + column)))
    .where('repositories.repository_id', '=', p.repositoryId);

const repositoryAndWorkflowQuery = hotQuery(selectRepositoryAndWorkflow);

/** Repository names are case-insensitive on GitHub, like logins. */
export function getRepositoryByName(
  db: Kysely<Database>,
  fullName: string,
): Promise<RepositoryRow | undefined> {
  return db
    .selectFrom('repositories')
    .selectAll()
    .where(sql<string>`lower(full_name)`, '=', fullName.toLowerCase())
    .orderBy('removed_at', 'asc')
    .orderBy('updated_at', 'desc')
    .executeTakeFirst();
}

/** Repositories of an account, by name. */
export function listRepositories(
  db: Kysely<Database>,
  accountId: number,
  page: KeysetPage = { limit: 1_000 },
): Promise<RepositoryRow[]> {
  let query = db
    .selectFrom('repositories')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('removed_at', 'is', null);
  if (page.after) query = query.where('full_name', '>', page.after[0]!);
  return query.orderBy('full_name').limit(page.limit).execute();
}

export async function setRepositoryFlag(
  db: Kysely<Database>,
  repositoryId: number,
  flag: 'provider_enabled' | 'completion_enabled',
  enabled: boolean,
  now: number,
): Promise<void> {
  await db
    .updateTable('repositories')
    .set({ [flag]: enabled, updated_at: now })
    .where('repository_id', '=', repositoryId)
    .execute();
}
