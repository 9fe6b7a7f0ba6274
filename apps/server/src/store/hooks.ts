import type { Kysely, NotNull } from 'kysely';
import type { Database, HookRole, RepositoryHookRow } from './schema.js';

/**
 * Repository hooks Zekt places. A row exists from the moment Zekt decides to place a hook (so the
 * `ping` GitHub sends right after creation can be verified) and gets GitHub's hook id once the create
 * call has answered.
 */
let changes = 0;

/**
 * Counts changes of hooks made by this process, so caches of hooks (ingest/hook-secrets.ts) drop
 * what they hold at once; changes made by other processes reach them when their entries expire.
 */
export function hookChanges(): number {
  return changes;
}

export async function beginHookPlacement(
  db: Kysely<Database>,
  hook: { repositoryId: number; role: HookRole; secretEncrypted: string; url: string },
  now: number,
): Promise<void> {
  changes++;
  await db
    .insertInto('repository_hooks')
    .values({
      repository_id: hook.repositoryId,
      role: hook.role,
      hook_id: null,
      secret_encrypted: hook.secretEncrypted,
      url: hook.url,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc.columns(['repository_id', 'role']).doUpdateSet({
        hook_id: null,
        secret_encrypted: hook.secretEncrypted,
        url: hook.url,
        created_at: now,
        updated_at: now,
      }),
    )
    .execute();
}

export async function completeHookPlacement(
  db: Kysely<Database>,
  repositoryId: number,
  role: HookRole,
  hookId: number,
  now: number,
): Promise<void> {
  changes++;
  await db
    .updateTable('repository_hooks')
    .set({ hook_id: hookId, updated_at: now })
    .where('repository_id', '=', repositoryId)
    .where('role', '=', role)
    .execute();
}

export async function deleteHook(db: Kysely<Database>, repositoryId: number, role: HookRole): Promise<void> {
  changes++;
  await db
    .deleteFrom('repository_hooks')
    .where('repository_id', '=', repositoryId)
    .where('role', '=', role)
    .execute();
}

export function getHook(
  db: Kysely<Database>,
  repositoryId: number,
  role: HookRole,
): Promise<RepositoryHookRow | undefined> {
  return db
    .selectFrom('repository_hooks')
    .selectAll()
    .where('repository_id', '=', repositoryId)
    .where('role', '=', role)
    .executeTakeFirst();
}

export function findHookById(db: Kysely<Database>, hookId: number): Promise<RepositoryHookRow | undefined> {
  return db.selectFrom('repository_hooks').selectAll().where('hook_id', '=', hookId).executeTakeFirst();
}

/**
 * Hooks of a repository placed after `since` whose GitHub id is not known yet — or is `hookId`: the
 * create call may answer (and its id be recorded) between a first lookup by id and this one, and the
 * ping must still find its hook.
 */
export function findHooksBeingPlaced(
  db: Kysely<Database>,
  repositoryId: number,
  since: number,
  hookId: number | null,
): Promise<RepositoryHookRow[]> {
  return db
    .selectFrom('repository_hooks')
    .selectAll()
    .where('repository_id', '=', repositoryId)
    .where((eb) =>
      hookId === null
        ? eb('hook_id', 'is', null)
        : eb.or([eb('hook_id', 'is', null), eb('hook_id', '=', hookId)]),
    )
    .where('created_at', '>=', since)
    .execute();
}

/** A hook Zekt placed and GitHub confirmed, with what is needed to call GitHub about it. */
export interface PlacedHook {
  hookId: number;
  role: HookRole;
  installationId: number;
  fullName: string;
}

/** Every placed hook of a repository still in a live installation: what the reconciler lists. */
export async function listPlacedHooks(db: Kysely<Database>): Promise<PlacedHook[]> {
  const rows = await db
    .selectFrom('repository_hooks')
    .innerJoin('repositories', 'repositories.repository_id', 'repository_hooks.repository_id')
    .innerJoin('accounts', 'accounts.account_id', 'repositories.account_id')
    .select([
      'repository_hooks.hook_id',
      'repository_hooks.role',
      'accounts.installation_id',
      'repositories.full_name',
    ])
    .where('repository_hooks.hook_id', 'is not', null)
    .where('repositories.removed_at', 'is', null)
    .where('accounts.installation_id', 'is not', null)
    .where('accounts.uninstalled_at', 'is', null)
    .orderBy('repository_hooks.hook_id')
    .$narrowType<{ hook_id: NotNull; installation_id: NotNull }>()
    .execute();
  return rows.map((row) => ({
    hookId: row.hook_id,
    role: row.role,
    installationId: row.installation_id,
    fullName: row.full_name,
  }));
}
