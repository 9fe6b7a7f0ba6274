import { randomUUID } from 'node:crypto';
import type { AuditActor } from '../domain/audit.js';
import type { Clock } from '../domain/clock.js';
import { GitHubApiError, type GitHubClient } from '../github/github-client.js';
import { generateHookSecret } from '../security/api-tokens.js';
import type { SecretBox } from '../security/secret-box.js';
import { getRepository, setRepositoryFlag } from '../store/accounts.js';
import { recordAudit } from '../store/audit.js';
import { beginHookPlacement, completeHookPlacement, deleteHook, getHook } from '../store/hooks.js';
import { withLease } from '../store/leases.js';
import { followRunsOfRepository } from '../store/run-following.js';
import type { AccountRow, HookRole, RepositoryRow } from '../store/schema.js';
import type { Store } from '../store/store.js';

// The use case behind the provider switch and the COMPLETION switch: place or remove Zekt's hook
// in a repository on GitHub and record it, one switch per repository at a time. It answers with an
// outcome, not an HTTP error: the routes map each failure to its problem code. A failure's
// `detail` says what the user must do (reinstall, unsuspend, grant a permission, fix ZEKT_BASE_URL),
// which only this module knows.

export interface HookDeps {
  store: Store;
  clock: Clock;
  github: GitHubClient;
  secretBox: SecretBox;
  /** Zekt's public URL: the hooks point at `<baseUrl>/webhooks/github`. */
  baseUrl: string;
}

/** How long switching a hook may hold a repository: a few GitHub calls, each with its own timeout. */
const HOOK_SWITCH_LEASE_MS = 60_000;

export interface HookSwitch {
  account: AccountRow;
  repository: RepositoryRow;
  role: HookRole;
  enabled: boolean;
  /** Who asked, for the audit trail. */
  actor: AuditActor;
}

/** Why a switch did not happen. */
export type HookSwitchFailure =
  /** Another switch of the repository holds it and GitHub has not answered that one yet. */
  | { outcome: 'busy'; detail: string }
  /** The App is not installed on the account, or its installation is suspended. */
  | { outcome: 'installation_unavailable'; detail: string }
  /** GitHub answered with an error (`githubStatus`; null when it gave none). */
  | { outcome: 'github_rejected'; detail: string; githubStatus: number | null; cause: unknown }
  /** GitHub did not answer. */
  | { outcome: 'github_unavailable'; detail: string; cause: unknown };

export type HookSwitchOutcome = { outcome: 'switched' } | HookSwitchFailure;

/** Carries a failure out of the lease's work to `switchRepositoryHook`, which returns it. */
class HookSwitchFailed extends Error {
  constructor(readonly failure: HookSwitchFailure) {
    super(failure.detail);
  }
}

/**
 * The provider switch and the COMPLETION switch are the same operation on a different hook:
 * place (or remove) Zekt's webhook in the repository, then record the flag (and, when it changed,
 * the audit entry).
 */
export async function switchRepositoryHook(deps: HookDeps, change: HookSwitch): Promise<HookSwitchOutcome> {
  try {
    return await switchUnderLease(deps, change);
  } catch (error) {
    if (error instanceof HookSwitchFailed) return error.failure;
    throw error;
  }
}

async function switchUnderLease(deps: HookDeps, change: HookSwitch): Promise<HookSwitchOutcome> {
  const { account, repository, role, enabled } = change;
  // One switch of a repository's hooks at a time, across processes: two concurrent "enable"s
  // would otherwise both create a hook and leave Zekt holding a secret GitHub does not use.
  const held = await withLease(
    deps.store.db,
    {
      name: `repository-hooks:${repository.repository_id}`,
      owner: randomUUID(),
      ttlMs: HOOK_SWITCH_LEASE_MS,
      waitMs: HOOK_SWITCH_LEASE_MS,
      now: () => deps.clock.now(),
    },
    async () => {
      if (enabled) await placeHook(deps, account, repository, role);
      else await removeHook(deps, account, repository, role);
      const flag = role === 'provider' ? 'provider_enabled' : 'completion_enabled';
      // Read again under the lease: another switch may have changed it while this one waited.
      const was = Boolean((await getRepository(deps.store.db, repository.repository_id))?.[flag]);
      await deps.store.transaction(async (trx) => {
        const now = deps.clock.now();
        await setRepositoryFlag(trx, repository.repository_id, flag, enabled, now);
        // Runs its webhooks were to report are read by Zekt from now on.
        if (role === 'completion' && !enabled)
          await followRunsOfRepository(trx, repository.repository_id, now);
        if (was === enabled) return;
        await recordAudit(
          trx,
          {
            actor: change.actor,
            accountIds: [account.account_id],
            action: role === 'provider' ? 'provider.switch' : 'completion_tracking.switch',
            target: { type: 'repository', id: repository.full_name },
            before: { enabled: was },
            after: { enabled },
          },
          now,
        );
      });
    },
  );
  if (!held.acquired) {
    return {
      outcome: 'busy',
      detail: `another request is switching the webhooks of ${repository.full_name} and GitHub has not answered it yet; try again`,
    };
  }
  return { outcome: 'switched' };
}

/**
 * Where a hook of `role` points. The two roles' hooks differ by URL because GitHub refuses a second
 * hook with the URL and events of one a repository already has ("Hook already exists"), and a
 * repository may be a provider and a consumer at once; the query names the role for people reading
 * the repository's settings (Zekt tells hooks apart by their ids).
 */
export function hookUrl(baseUrl: string, role: HookRole): string {
  return role === 'provider' ? `${baseUrl}/webhooks/github` : `${baseUrl}/webhooks/github?role=${role}`;
}

/**
 * Places Zekt's webhook in a repository (callers hold the repository's lease, `switchRepositoryHook`):
 *
 * - the hook row (with its encrypted secret) is written before GitHub is asked, so the `ping`
 *   GitHub sends at once can be verified;
 * - when GitHub answers that the hook already exists (Zekt placed it and lost track: a crash, a
 *   restored backup), the hook pointing at this service is adopted: its secret is replaced with
 *   the one Zekt keeps, so GitHub and Zekt agree again.
 */
async function placeHook(
  deps: Pick<HookDeps, 'store' | 'clock' | 'baseUrl' | 'github' | 'secretBox'>,
  account: AccountRow,
  repository: RepositoryRow,
  role: HookRole,
) {
  const db = deps.store.db;
  const repositoryId = repository.repository_id;
  const existing = await getHook(db, repositoryId, role);
  if (existing?.hook_id != null) return;
  const installationId = usableInstallation(account);
  const secret = generateHookSecret();
  const url = hookUrl(deps.baseUrl, role);
  await beginHookPlacement(
    db,
    { repositoryId, role, secretEncrypted: deps.secretBox.seal(secret), url },
    deps.clock.now(),
  );
  const [owner, repo] = repository.full_name.split('/') as [string, string];
  const hook = { installationId, owner, repo, url, secret, events: ['workflow_run'] };
  try {
    let hookId: number;
    try {
      ({ hookId } = await deps.github.createRepositoryHook(hook));
    } catch (error) {
      if (!isHookAlreadyThere(error)) throw error;
      const found = (await deps.github.listRepositoryHooks(hook)).find((h) => h.url === url);
      if (!found) throw error;
      await deps.github.updateRepositoryHook({ ...hook, hookId: found.id });
      hookId = found.id;
    }
    await completeHookPlacement(db, repositoryId, role, hookId, deps.clock.now());
  } catch (error) {
    await deleteHook(db, repositoryId, role);
    throw githubFailure(error, `could not place the webhook in ${repository.full_name}`);
  }
}

/** GitHub's 422 for a hook whose URL and events a hook of the repository already has. */
function isHookAlreadyThere(error: unknown): boolean {
  return (
    error instanceof GitHubApiError &&
    error.status === 422 &&
    [error.message, ...error.details].some((text) => /already exists/i.test(text))
  );
}

async function removeHook(
  deps: Pick<HookDeps, 'store' | 'github'>,
  account: AccountRow,
  repository: RepositoryRow,
  role: HookRole,
) {
  const db = deps.store.db;
  const repositoryId = repository.repository_id;
  const existing = await getHook(db, repositoryId, role);
  if (!existing) return;
  if (existing.hook_id !== null && account.installation_id !== null) {
    const [owner, repo] = repository.full_name.split('/') as [string, string];
    try {
      await deps.github.deleteRepositoryHook({
        installationId: account.installation_id,
        owner,
        repo,
        hookId: existing.hook_id,
      });
    } catch (error) {
      throw githubFailure(error, `could not remove the webhook from ${repository.full_name}`);
    }
  }
  await deleteHook(db, repositoryId, role);
}

function usableInstallation(account: AccountRow): number {
  if (account.installation_id === null || account.uninstalled_at !== null) {
    throw new HookSwitchFailed({
      outcome: 'installation_unavailable',
      detail: `the Zekt App is not installed on ${account.login}; install it again`,
    });
  }
  if (account.suspended_at !== null) {
    throw new HookSwitchFailed({
      outcome: 'installation_unavailable',
      detail: `the Zekt App installation of ${account.login} is suspended; unsuspend it in GitHub`,
    });
  }
  return account.installation_id;
}

function githubFailure(error: unknown, what: string): HookSwitchFailed {
  if (!(error instanceof GitHubApiError)) {
    return new HookSwitchFailed({
      outcome: 'github_unavailable',
      detail: `${what}: GitHub did not answer`,
      cause: error,
    });
  }
  const unreachable =
    error.details.some((d) => /public Internet/i.test(d)) || /public Internet/i.test(error.message);
  const hint = unreachable
    ? ' — GitHub only delivers webhooks to URLs it can reach: set ZEKT_BASE_URL to this service’s public URL'
    : error.status === 403 || error.status === 404
      ? ' — the App needs the "Webhooks: read and write" repository permission; accept the new permissions in GitHub'
      : '';
  return new HookSwitchFailed({
    outcome: 'github_rejected',
    detail: `${what}: ${error.message}${hint}`,
    githubStatus: error.status ?? null,
    cause: error,
  });
}
